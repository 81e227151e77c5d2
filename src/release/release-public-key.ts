// Which public key a release is checked against: --public-key when given, else the
// definition's release.publicKey (base64 of the raw 32-byte Ed25519 key).
import { FleetkitError, isFleetkitError } from '../checks/fleetkit-error.js'

export interface PublicKeyChoice {
  publicKey?: string
  /** Path of fleet.yaml, read only when no publicKey is given. */
  definition?: string
}

export async function resolveReleasePublicKey(choice: PublicKeyChoice): Promise<string> {
  if (choice.publicKey !== undefined) return choice.publicKey
  const path = choice.definition ?? 'fleet.yaml'
  // The definition loader (schema, rules) is only needed on this path: load it lazily.
  const { loadDefinition } = await import('../definition/load.js')
  try {
    return (await loadDefinition(path)).release.publicKey
  } catch (error) {
    if (isFleetkitError(error) && error.code === 'DEFINITION_MISSING') {
      throw new FleetkitError(
        'RELEASE_INPUT_INVALID',
        `no release public key: pass --public-key BASE64 or --definition PATH (there is no ${path})`,
        {
          actions: ['fleetkit release verify --dir DIR --version VERSION --public-key BASE64'],
          data: { definition: path },
        },
      )
    }
    throw error
  }
}
