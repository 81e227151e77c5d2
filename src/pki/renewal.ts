// When a client certificate may be renewed: less than a third of its stored lifetime
// left, or issued by a CA other than the current one (after a rotation began).

export interface CertificateTerm {
  notBefore: Date
  notAfter: Date
  issuerCaSha256: string
}

export function isRenewalDue(cert: CertificateTerm, currentCaSha256: string, now: Date): boolean {
  if (cert.issuerCaSha256 !== currentCaSha256) return true
  const lifetime = cert.notAfter.getTime() - cert.notBefore.getTime()
  const left = cert.notAfter.getTime() - now.getTime()
  return left * 3 < lifetime
}

/** The earliest time the one-third rule allows a renewal (for messages and agents). */
export function renewalDueAt(cert: CertificateTerm): Date {
  const lifetime = cert.notAfter.getTime() - cert.notBefore.getTime()
  return new Date(cert.notAfter.getTime() - Math.floor(lifetime / 3))
}
