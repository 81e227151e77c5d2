// A fresh P-256 key made on this host (it never leaves it) and a PKCS#10 request
// for it with CN = node ID. @peculiar/x509 needs 'reflect-metadata' loaded first (main.ts does).
import { webcrypto } from 'node:crypto'

export interface KeyAndCsr {
  keyPem: string
  csrPem: string
}

const SIGNING = { name: 'ECDSA', hash: 'SHA-256' } as const

export async function generateKeyAndCsr(nodeId: string): Promise<KeyAndCsr> {
  await import('reflect-metadata')
  const x509 = await import('@peculiar/x509')
  // Node 18 has no global crypto without a flag: hand x509 Node's WebCrypto explicitly.
  const crypto = webcrypto as unknown as Crypto
  const keys = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair
  const csr = await x509.Pkcs10CertificateRequestGenerator.create(
    { name: [{ CN: [nodeId] }], keys, signingAlgorithm: SIGNING },
    crypto,
  )
  const pkcs8 = await crypto.subtle.exportKey('pkcs8', keys.privateKey)
  return { keyPem: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY'), csrPem: csr.toString('pem') }
}
