// Test helpers for PKI: an ephemeral CA and node keys/CSRs generated at test time
// (no committed keys), plus an openssl runner for interop checks.
import 'reflect-metadata'

import { createCertificateAuthority, loadIssuingCa, type IssuingCa } from '../../src/pki/certificate-authority.js'
import { issueClientCertificate, type IssuedCertificate } from '../../src/pki/client-certificate.js'
import { checkCertificateRequest } from '../../src/pki/csr.js'
import { generateP256KeyPair, privateKeyToPem } from '../../src/pki/keys.js'
import { x509 } from '../../src/pki/x509-provider.js'

export { runProcessOk as run } from './process.js'

export async function ephemeralCa(now = new Date()): Promise<IssuingCa & { privateKeyPem: string }> {
  const created = await createCertificateAuthority({ now, commonName: 'fleetkit test CA' })
  return {
    ...(await loadIssuingCa(created.certificatePem, created.privateKeyPem)),
    privateKeyPem: created.privateKeyPem,
  }
}

export interface NodeKey {
  keys: CryptoKeyPair
  privateKeyPem: string
}

export async function nodeKey(): Promise<NodeKey> {
  const keys = await generateP256KeyPair()
  return { keys, privateKeyPem: await privateKeyToPem(keys.privateKey) }
}

/** A CSR signed by the key; `name` is the subject (default CN=<nodeId>), `dnsNames` the SAN. */
export async function makeCsr(
  key: NodeKey,
  options: { name: string; dnsNames?: string[]; ipNames?: string[] },
): Promise<string> {
  const names = [
    ...(options.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(options.ipNames ?? []).map((value) => ({ type: 'ip' as const, value })),
  ]
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: options.name,
    keys: key.keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' } as EcdsaParams,
    extensions: names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names)] : [],
  })
  return csr.toString('pem') + '\n'
}

/** The same CSR with one byte of its signature flipped: parses, but does not verify. */
export function tamperSignature(csrPem: string): string {
  const body = csrPem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '')
  const der = Buffer.from(body, 'base64')
  der[der.length - 5] = der[der.length - 5]! ^ 0x01
  const lines = der.toString('base64').match(/.{1,64}/g) ?? []
  return `-----BEGIN CERTIFICATE REQUEST-----\n${lines.join('\n')}\n-----END CERTIFICATE REQUEST-----\n`
}

/** A node key and the client certificate CA issues it through the CSR check, as an enrollment does. */
export async function issuedNodeCertificate(
  ca: IssuingCa,
  nodeId: string,
  options: { now?: Date; lifetimeSeconds?: number } = {},
): Promise<{ key: NodeKey; issued: IssuedCertificate; publicKey: { rawData: ArrayBuffer } }> {
  const key = await nodeKey()
  const check = await checkCertificateRequest(await makeCsr(key, { name: `CN=${nodeId}` }), nodeId)
  if (!check.ok) throw new Error(`the CSR check refused the test's own request: ${check.reason}`)
  const issued = await issueClientCertificate({
    ca,
    subjectPublicKey: check.publicKey,
    nodeId,
    now: options.now ?? new Date(),
    lifetimeSeconds: options.lifetimeSeconds ?? 3600,
  })
  return { key, issued, publicKey: check.publicKey }
}
