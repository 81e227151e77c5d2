// The check every issuance makes once it holds the shared issuance lock: the CA the caller holds
// in memory must not be one a rotation retired (aborted new CA, completed old CA). In the store:
// the gateway's routes and the CLI's operator certificates (src/lifecycle) both issue, and it is
// a lock and a query; the CA is named by its fingerprint, so the store needs nothing of src/pki.
import { FleetkitError } from '../../checks/fleetkit-error.js'
import { issuingCaRetired } from './ca-rotations.js'
import { takeIssuanceLockShared } from './certificates.js'
import type { Queryable } from '../database.js'

/** Seconds an agent waits before retrying: the PKI reload runs every 2 s. */
const RETRY_AFTER_SECONDS = 3

/** Take the shared issuance lock (inside a transaction) and refuse a retired issuer. */
export async function lockIssuance(client: Queryable, ca: { fingerprintSha256: string }): Promise<void> {
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
