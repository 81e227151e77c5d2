// The check every issuance makes once it holds the shared issuance lock: the CA this gateway
// holds in memory must not be one a rotation retired (aborted new CA, completed old CA).
import { FleetkitError } from '../checks/fleetkit-error.js'
import type { IssuingCa } from '../pki/certificate-authority.js'
import { issuingCaRetired } from '../store/ca-rotations.js'
import { takeIssuanceLockShared } from '../store/certificates.js'
import type { Queryable } from '../store/database.js'

/** Seconds an agent waits before retrying: the PKI reload runs every 2 s. */
const RETRY_AFTER_SECONDS = 3

/** Take the shared issuance lock (inside a transaction) and refuse a retired issuer. */
export async function lockIssuance(client: Queryable, ca: IssuingCa): Promise<void> {
  await takeIssuanceLockShared(client)
  if (await issuingCaRetired(client, ca.fingerprintSha256)) {
    throw new FleetkitError(
      'ISSUING_CA_RETIRED',
      'this gateway still holds a CA that a rotation retired; it reloads its PKI within seconds',
      {
        data: { retryAfterSeconds: RETRY_AFTER_SECONDS, caSha256: ca.fingerprintSha256 },
      },
    )
  }
}
