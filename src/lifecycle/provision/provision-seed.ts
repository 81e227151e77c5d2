// The user_data of a provisioned server: the node's agent seed with a fresh single-use enrollment
// secret, gzipped and base64-encoded (cloud-init's Hetzner data source decodes both), at most the
// API's 32,768 bytes. Only the secret's SHA-256 is kept; the clear secret lives in this value only.
import { gzipSync } from 'node:zlib'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { Rng } from '../../config/rng.js'
import type { Definition } from '../../definition/types.js'
import { newEnrollmentSecret } from '../../render/enrollment-secret.js'
import { agentSeedDocument, nodeTarget } from '../../render/seed-documents.js'
import { generateSshHostKey } from '../../render/ssh-host-key.js'
import type { SeedFiles } from '../seed/seed-files.js'

const USER_DATA_MAX_BYTES = 32_768

export interface ProvisionSeed {
  userData: string
  secretSha256: Buffer
  /** The public host key pinned for a node that declares ssh.user. */
  hostKeyPublic: string | null
}

export function renderProvisionSeed(definition: Definition, nodeId: string, files: SeedFiles, rng: Rng): ProvisionSeed {
  const target = nodeTarget(definition, nodeId, undefined)
  const secret = newEnrollmentSecret(rng)
  const hostKey = target.sshUser === undefined ? undefined : generateSshHostKey(target.id, rng)
  const document = agentSeedDocument(definition, target, files.caBundle!, secret.secret, files.releaseCa, hostKey)
  const userData = gzipSync(Buffer.from(document, 'utf8'), { level: 9 }).toString('base64')
  if (userData.length > USER_DATA_MAX_BYTES) {
    throw new FleetkitError(
      'SEED_TOO_LARGE',
      `the seed of ${nodeId} is ${userData.length} bytes as gzip+base64 user_data, over the ${USER_DATA_MAX_BYTES}-byte limit`,
      {
        actions: ["shorten the CA bundle or the operators' keys in the fleet definition"],
        data: { expected: USER_DATA_MAX_BYTES, actual: userData.length },
      },
    )
  }
  return { userData, secretSha256: secret.sha256, hostKeyPublic: hostKey?.publicKey ?? null }
}
