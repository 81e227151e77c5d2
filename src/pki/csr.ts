// Checking a PKCS#10 request from a node: the signature proves possession of the
// key; the subject is exactly CN=<node id>; SANs, if any, only DNS names equal to it.
// Read with the strict DER reader and verified by node:crypto (OpenSSL): parsing it through an
// ASN.1 schema library cost about 1 ms of the issuance worker per enrollment (docs/performance.md).
import { createPublicKey, type KeyObject, verify } from 'node:crypto'

import { children, DerError, type DerElement, expect, oidOf, readOne, stringOf } from './der-reader.js'
import { pemBlocks } from './pem.js'

const SUBJECT_ALT_NAME_OID = '2.5.29.17'
const COMMON_NAME_OID = '2.5.4.3'
const EXTENSION_REQUEST_OID = '1.2.840.113549.1.9.14'
/** OpenSSL's names of the curves a node key may use: P-256 and P-384. */
const ACCEPTED_CURVES = new Set(['prime256v1', 'secp384r1'])
/** The ECDSA signature algorithms (RFC 5758) and the hash each names. */
const ECDSA_HASHES = new Map([
  ['1.2.840.10045.4.3.2', 'sha256'],
  ['1.2.840.10045.4.3.3', 'sha384'],
  ['1.2.840.10045.4.3.4', 'sha512'],
])
const MAX_CSR_PEM_LENGTH = 16 * 1024

/** The node's key as a DER SubjectPublicKeyInfo: what issueClientCertificate puts in the certificate. */
export type CsrCheck = { ok: true; publicKey: { rawData: ArrayBuffer } } | { ok: false; reason: string }

/** The checks that need no parsing (type, size, PEM label): the reason a request fails them, or undefined. */
export function csrShapeProblem(csrPem: unknown): string | undefined {
  if (typeof csrPem !== 'string' || csrPem.length === 0) return 'csr_pem is missing'
  if (csrPem.length > MAX_CSR_PEM_LENGTH) return 'csr_pem is too long'
  if (!csrPem.includes('-----BEGIN CERTIFICATE REQUEST-----')) return 'csr_pem is not a PEM certificate request'
  return undefined
}

interface ParsedRequest {
  info: DerElement
  subject: DerElement
  publicKeyInfo: DerElement
  attributes: DerElement | undefined
  signatureOid: string
  signature: Buffer
}

/** CertificationRequest ::= SEQUENCE { info, signatureAlgorithm, signature BIT STRING } (RFC 2986). */
function parseRequest(der: Buffer): ParsedRequest {
  const parts = children(expect(readOne(der), 0x30, 'CertificationRequest'))
  if (parts.length !== 3) throw new DerError('CertificationRequest has three parts')
  const [info, algorithm, signatureBits] = parts as [DerElement, DerElement, DerElement]
  const fields = children(expect(info, 0x30, 'CertificationRequestInfo'))
  if (fields.length < 3 || fields.length > 4) throw new DerError('CertificationRequestInfo has three or four parts')
  const version = expect(fields[0], 0x02, 'version').content
  if (version.length !== 1 || version[0] !== 0) throw new DerError('only version 1 (0) requests')
  const attributes = fields[3] === undefined ? undefined : expect(fields[3], 0xa0, 'attributes')
  const algorithmParts = children(expect(algorithm, 0x30, 'signatureAlgorithm'))
  const bits = expect(signatureBits, 0x03, 'signature').content
  if (bits.length < 2 || bits[0] !== 0) throw new DerError('the signature is whole bytes')
  return {
    info,
    subject: expect(fields[1], 0x30, 'subject'),
    publicKeyInfo: expect(fields[2], 0x30, 'subjectPKInfo'),
    attributes,
    signatureOid: oidOf(expect(algorithmParts[0], 0x06, 'signatureAlgorithm.algorithm')),
    signature: bits.subarray(1),
  }
}

export async function checkCertificateRequest(csrPem: unknown, nodeId: string): Promise<CsrCheck> {
  const problem = csrShapeProblem(csrPem)
  if (problem !== undefined || typeof csrPem !== 'string') return { ok: false, reason: problem ?? 'csr_pem is missing' }
  const blocks = pemBlocks(csrPem).filter((b) => b.label === 'CERTIFICATE REQUEST')
  let request: ParsedRequest
  let key: KeyObject
  try {
    if (blocks.length !== 1) throw new DerError('one CERTIFICATE REQUEST block')
    request = parseRequest(blocks[0]!.der)
    key = createPublicKey({ key: request.publicKeyInfo.der, format: 'der', type: 'spki' })
  } catch {
    return { ok: false, reason: 'csr_pem does not parse as PKCS#10' }
  }
  if (key.asymmetricKeyType !== 'ec' || !ACCEPTED_CURVES.has(key.asymmetricKeyDetails?.namedCurve ?? '')) {
    return { ok: false, reason: 'the key must be an EC key on P-256 or P-384' }
  }
  if (!signatureVerifies(request, key)) {
    return { ok: false, reason: 'the request signature does not verify (no proof of possession)' }
  }
  const subject = subjectAttributes(request.subject)
  if (subject?.length !== 1 || subject[0]!.type !== COMMON_NAME_OID || subject[0]!.value !== nodeId) {
    return { ok: false, reason: 'the subject must be exactly CN=<node id>' }
  }
  let names: { dns: boolean; value: string }[] | undefined
  try {
    names = requestedAltNames(request.attributes)
  } catch {
    return { ok: false, reason: 'the subjectAltName extension does not parse' }
  }
  if (names?.some((n) => !n.dns || n.value !== nodeId)) {
    return { ok: false, reason: 'subjectAltName may only hold DNS names equal to the node id' }
  }
  // A copy of its own: the worker posts rawData to the gateway's thread.
  return { ok: true, publicKey: { rawData: Uint8Array.from(request.publicKeyInfo.der).buffer } }
}

function signatureVerifies(request: ParsedRequest, key: KeyObject): boolean {
  const hash = ECDSA_HASHES.get(request.signatureOid)
  if (hash === undefined) return false
  try {
    return verify(hash, request.info.der, { key, dsaEncoding: 'der' }, request.signature)
  } catch {
    return false
  }
}

/** Name ::= SEQUENCE OF SET OF { type OID, value string }; undefined when it does not parse. */
function subjectAttributes(name: DerElement): { type: string; value: string }[] | undefined {
  try {
    const out: { type: string; value: string }[] = []
    for (const rdn of children(name)) {
      for (const attribute of children(expect(rdn, 0x31, 'RelativeDistinguishedName'))) {
        const [type, value, ...rest] = children(expect(attribute, 0x30, 'AttributeTypeAndValue'))
        if (rest.length > 0 || value === undefined) throw new DerError('AttributeTypeAndValue has two parts')
        out.push({ type: oidOf(type!), value: stringOf(value) })
      }
    }
    return out
  } catch {
    return undefined
  }
}

/** The names of the subjectAltName extension the request asks for, or undefined when it asks none. */
function requestedAltNames(attributes: DerElement | undefined): { dns: boolean; value: string }[] | undefined {
  if (attributes === undefined) return undefined
  for (const attribute of children(attributes)) {
    const [type, values] = children(expect(attribute, 0x30, 'Attribute'))
    if (type === undefined || oidOf(type) !== EXTENSION_REQUEST_OID) continue
    for (const extensions of children(expect(values, 0x31, 'Attribute values'))) {
      for (const extension of children(expect(extensions, 0x30, 'Extensions'))) {
        const parts = children(expect(extension, 0x30, 'Extension'))
        if (oidOf(parts[0]!) !== SUBJECT_ALT_NAME_OID) continue
        const value = expect(parts[parts.length - 1], 0x04, 'extnValue').content
        return children(expect(readOne(value), 0x30, 'GeneralNames')).map((name) =>
          // dNSName is [2] IMPLICIT IA5String; any other kind of name is refused by the caller.
          name.tag === 0x82 ? { dns: true, value: stringOf({ ...name, tag: 0x16 }) } : { dns: false, value: '' },
        )
      }
    }
  }
  return undefined
}
