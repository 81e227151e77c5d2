// Checking a PKCS#10 request from a node: the signature proves possession of the
// key; the subject is exactly CN=<node id>; SANs, if any, only DNS names equal to it.
import { x509 } from './x509-provider.js'

const SUBJECT_ALT_NAME_OID = '2.5.29.17'
const COMMON_NAME_OID = '2.5.4.3'
const ACCEPTED_CURVES = new Set(['P-256', 'P-384'])
const MAX_CSR_PEM_LENGTH = 16 * 1024

export type CsrCheck = { ok: true; publicKey: x509.PublicKey } | { ok: false; reason: string }

/** The checks that need no parsing (type, size, PEM label): the reason a request fails them, or undefined. */
export function csrShapeProblem(csrPem: unknown): string | undefined {
  if (typeof csrPem !== 'string' || csrPem.length === 0) return 'csr_pem is missing'
  if (csrPem.length > MAX_CSR_PEM_LENGTH) return 'csr_pem is too long'
  if (!csrPem.includes('-----BEGIN CERTIFICATE REQUEST-----')) return 'csr_pem is not a PEM certificate request'
  return undefined
}

export async function checkCertificateRequest(csrPem: unknown, nodeId: string): Promise<CsrCheck> {
  const problem = csrShapeProblem(csrPem)
  if (problem !== undefined || typeof csrPem !== 'string') return { ok: false, reason: problem ?? 'csr_pem is missing' }
  let csr: x509.Pkcs10CertificateRequest
  try {
    csr = new x509.Pkcs10CertificateRequest(csrPem)
  } catch {
    return { ok: false, reason: 'csr_pem does not parse as PKCS#10' }
  }
  const algorithm = csr.publicKey.algorithm as EcKeyAlgorithm
  if (algorithm.name !== 'ECDSA' || !ACCEPTED_CURVES.has(algorithm.namedCurve)) {
    return { ok: false, reason: 'the key must be an EC key on P-256 or P-384' }
  }
  // verify() returns false (it does not throw) on a bad signature; guard both anyway.
  const signatureValid = await csr.verify().catch(() => false)
  if (!signatureValid) return { ok: false, reason: 'the request signature does not verify (no proof of possession)' }
  const subject = subjectAttributes(csr)
  if (subject.length !== 1 || subject[0]!.type !== COMMON_NAME_OID || subject[0]!.value !== nodeId) {
    return { ok: false, reason: 'the subject must be exactly CN=<node id>' }
  }
  const san = csr.getExtension(SUBJECT_ALT_NAME_OID)
  if (san) {
    let names: { type: string; value: string }[]
    try {
      names = new x509.SubjectAlternativeNameExtension(san.rawData).names.toJSON()
    } catch {
      return { ok: false, reason: 'the subjectAltName extension does not parse' }
    }
    if (names.some((n) => n.type !== 'dns' || n.value !== nodeId)) {
      return { ok: false, reason: 'subjectAltName may only hold DNS names equal to the node id' }
    }
  }
  return { ok: true, publicKey: csr.publicKey }
}

function subjectAttributes(csr: x509.Pkcs10CertificateRequest): { type: string; value: string }[] {
  const out: { type: string; value: string }[] = []
  for (const rdn of csr.subjectName.toJSON()) {
    for (const [type, values] of Object.entries(rdn)) {
      for (const value of values) out.push({ type: oidOf(type), value })
    }
  }
  return out
}

function oidOf(shortName: string): string {
  return shortName === 'CN' ? COMMON_NAME_OID : shortName
}
