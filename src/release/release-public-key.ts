// Which public key a release is checked against: --public-key when given, else the
// definition's release.publicKey (base64 of the raw 32-byte Ed25519 key).
import { FleetkitError } from '../checks/fleetkit-error.js'

export interface PublicKeyChoice {
  publicKey?: string
  definition?: string
}

export async function resolveReleasePublicKey(choice: PublicKeyChoice): Promise<string> {
  if (choice.publicKey !== undefined) return choice.publicKey
  throw new FleetkitError('RELEASE_INPUT_INVALID', 'no release public key: pass --public-key BASE64 (the value of release.publicKey in fleet.yaml)', {
    actions: ['fleetkit release verify --dir DIR --version VERSION --public-key BASE64'],
  })
}
