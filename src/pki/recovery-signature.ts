// The bytes a recovering agent signs with the key of its expired certificate (POST /v1/recover):
// shared by the agent and the gateway, so both ends build them one way. node:crypto only (the agent bundle carries it).
import { createHash } from 'node:crypto'

/**
 * What a recovering agent signs. Version 2 binds the CSR to the challenge, so a signature is good
 * only for the key the agent asked for; version 1 (agents before it) signed the challenge alone.
 */
export type RecoverySignatureVersion = 1 | 2

export function recoverySignedBytes(challenge: string, csrPem: string, version: RecoverySignatureVersion): Buffer {
  if (version === 1) return Buffer.from(challenge, 'utf8')
  const csrDigest = createHash('sha256').update(csrPem, 'utf8').digest('hex')
  return Buffer.from(`fleetkit recover v2\0${challenge}\0${csrDigest}`, 'utf8')
}
