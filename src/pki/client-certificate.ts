// Issuing a node's client certificate: CN and SAN DNS = node id, EKU clientAuth only,
// KeyUsage digitalSignature (critical), not a CA, random serial, notBefore backdated 60 s.
// The certificate is encoded directly in DER (der.ts) and signed with node:crypto: the same bytes
// @peculiar/x509's generator wrote (a unit test compares the two to-be-signed parts byte for byte),
// at a tenth of the cost, which is most of what an enrollment costs the issuance worker.
import { createPrivateKey, type KeyObject, sign } from 'node:crypto'

import { authorityKeyIdentifier, type IssuingCa } from './certificate-authority.js'
import {
  bitString,
  booleanTrue,
  certificateTime,
  directoryString,
  explicit,
  objectIdentifier,
  octetString,
  sequence,
  set,
  tlv,
  unsignedInteger,
} from './der.js'
import { derFingerprintSha256 } from './fingerprint.js'
import { pemEncode } from './pem.js'
import type { Rng } from '../config/rng.js'
import { randomSerial } from './serial.js'

/** Clock skew a fresh certificate tolerates: notBefore lies this far in the past. */
export const BACKDATE_MS = 60_000

export interface IssuedCertificate {
  certificatePem: string
  fingerprintSha256: string
  serial: string
  notBefore: Date
  notAfter: Date
  issuerCaSha256: string
}

/** ecdsa-with-SHA256 (RFC 5758), no parameters: keys.ts SIGNING_ALGORITHM. */
const ECDSA_WITH_SHA256 = sequence(objectIdentifier('1.2.840.10045.4.3.2'))
const VERSION_3 = explicit(0, unsignedInteger('02'))
const COMMON_NAME = objectIdentifier('2.5.4.3')
/** The extensions every client certificate carries whatever its node. */
const FIXED_EXTENSIONS = Buffer.concat([
  // basicConstraints, critical: cA false (the DEFAULT, so an empty SEQUENCE).
  sequence(objectIdentifier('2.5.29.19'), booleanTrue(), octetString(sequence())),
  // keyUsage, critical: digitalSignature (bit 0; 7 unused bits).
  sequence(objectIdentifier('2.5.29.15'), booleanTrue(), octetString(Buffer.from([0x03, 0x02, 0x07, 0x80]))),
  // extKeyUsage: clientAuth only.
  sequence(objectIdentifier('2.5.29.37'), octetString(sequence(objectIdentifier('1.3.6.1.5.5.7.3.2')))),
])

/** What issuing needs of a CA, derived once per CA: its subject as the issuer, its AKI, its signing key. */
interface IssuerParts {
  issuerName: Buffer
  authorityKeyIdentifier: Buffer
  key: KeyObject
}
const issuerParts = new WeakMap<IssuingCa, Promise<IssuerParts>>()

function partsOf(ca: IssuingCa): Promise<IssuerParts> {
  let parts = issuerParts.get(ca)
  if (!parts) {
    parts = (async () => {
      const key = createPrivateKey(ca.privateKeyPem)
      if (key.asymmetricKeyType !== 'ec') throw new Error('the CA key is not an EC key; fleetkit signs with ECDSA')
      return {
        issuerName: Buffer.from(ca.certificate.subjectName.toArrayBuffer()),
        authorityKeyIdentifier: Buffer.from((await authorityKeyIdentifier(ca)).rawData),
        key,
      }
    })()
    issuerParts.set(ca, parts)
  }
  return parts
}

export async function issueClientCertificate(options: {
  ca: IssuingCa
  /** The node's key as a DER SubjectPublicKeyInfo (an x509.PublicKey's rawData, or the CSR check's). */
  subjectPublicKey: { rawData: ArrayBuffer | Uint8Array }
  nodeId: string
  now: Date
  lifetimeSeconds: number
  rng?: Rng
}): Promise<IssuedCertificate> {
  const { ca, nodeId, now } = options
  // A dNSName is an IA5String: node ids are validated far stricter than this before they get here.
  if (!/^[!-~]{1,253}$/.test(nodeId)) throw new RangeError('a node id in a certificate is printable ASCII')
  const serial = randomSerial(options.rng)
  // Whole seconds: certificates carry second precision, and the stored row must equal the certificate.
  const start = Math.floor(now.getTime() / 1000) * 1000
  const notBefore = new Date(start - BACKDATE_MS)
  const notAfter = new Date(start + options.lifetimeSeconds * 1000)
  const issuer = await partsOf(ca)
  const tbs = sequence(
    VERSION_3,
    unsignedInteger(serial),
    ECDSA_WITH_SHA256,
    issuer.issuerName,
    sequence(certificateTime(notBefore), certificateTime(notAfter)),
    sequence(set(sequence(COMMON_NAME, directoryString(nodeId)))),
    Buffer.from(options.subjectPublicKey.rawData as ArrayBuffer),
    explicit(
      3,
      sequence(
        FIXED_EXTENSIONS,
        // subjectAltName: dNSName [2] IA5String = the node id.
        sequence(objectIdentifier('2.5.29.17'), octetString(sequence(tlv(0x82, Buffer.from(nodeId, 'ascii'))))),
        issuer.authorityKeyIdentifier,
      ),
    ),
  )
  const signature = sign('sha256', tbs, { key: issuer.key, dsaEncoding: 'der' })
  const der = sequence(tbs, ECDSA_WITH_SHA256, bitString(signature))
  return {
    certificatePem: pemEncode('CERTIFICATE', der),
    fingerprintSha256: derFingerprintSha256(der),
    serial,
    notBefore,
    notAfter,
    issuerCaSha256: ca.fingerprintSha256,
  }
}
