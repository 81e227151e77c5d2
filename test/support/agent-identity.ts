// Test identities made at test time: a throwaway CA and a P-256 agent key and certificate.
import 'reflect-metadata'

import { webcrypto } from 'node:crypto'

import * as x509 from '@peculiar/x509'

const crypto = webcrypto as unknown as Crypto
const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const

export interface TestIdentity {
  keyPem: string
  certificatePem: string
  caPem: string
}

export async function makeTestIdentity(nodeId: string, notBefore: Date, notAfter: Date): Promise<TestIdentity> {
  const caKeys = (await crypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair
  const ca = await x509.X509CertificateGenerator.createSelfSigned(
    {
      name: 'CN=test CA',
      keys: caKeys,
      notBefore,
      notAfter,
      signingAlgorithm: EC,
      extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
    },
    crypto,
  )
  const keys = (await crypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair
  const certificate = await x509.X509CertificateGenerator.create(
    {
      subject: `CN=${nodeId}`,
      issuer: ca.subject,
      publicKey: keys.publicKey,
      signingKey: caKeys.privateKey,
      notBefore,
      notAfter,
      signingAlgorithm: EC,
      serialNumber: '0a1b2c',
    },
    crypto,
  )
  const pkcs8 = await crypto.subtle.exportKey('pkcs8', keys.privateKey)
  return {
    keyPem: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY'),
    certificatePem: certificate.toString('pem'),
    caPem: ca.toString('pem'),
  }
}
