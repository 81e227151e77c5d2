// One PKI command at a time on a PKI directory: `ca init`, `ca rotate` (each phase), `ca server-cert`,
// `db backup` (from its database snapshot until it has read the PKI) and `db restore` (which replaces the
// directory) take `<pki>/.pki.lock`. Without it two of them at once could delete each other's temp files as
// stale (each removes a killed run's before it writes) or interleave their renames (a CA key of one run
// beside the certificate of the other); a backup could copy a set half renamed, or a database from before a
// rotation beside the PKI after it. Every command that also uses the database takes this lock before it locks
// a table or row there: none waits for the lock holding a database lock another holder of it wants.
// Readers that only load the set (the gateway, every 2 s) need no lock: each file is renamed whole.
import { access, constants, stat } from 'node:fs/promises'
import { join } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { LockTimeoutError, withFileLock } from '../fs/file-lock.js'
import { makeDirectories, STATE_PARENT_MODE } from '../fs/make-directories.js'

/** A dot name: `db backup` and `db restore`'s emptiness check leave dot files out, as they do temp files. */
const PKI_LOCK_NAME = '.pki.lock'

export async function withPkiLock<T>(
  pkiDir: string,
  fn: () => Promise<T>,
  options: { create?: boolean; timeoutMs?: number; readOnly?: boolean; signal?: AbortSignal } = {},
): Promise<T> {
  if (options.create) await makeDirectories(pkiDir, 0o700, STATE_PARENT_MODE)
  // No directory, nothing to guard: `fn` reports what is missing (CA_MISSING).
  else if (!(await stat(pkiDir).catch(() => undefined))?.isDirectory()) return fn()
  // A reader (a backup) of a directory it may not write, or a read-only mount, reads as before.
  if (
    options.readOnly &&
    !(await access(pkiDir, constants.W_OK).then(
      () => true,
      () => false,
    ))
  )
    return fn()
  const lockPath = join(pkiDir, PKI_LOCK_NAME)
  try {
    return await withFileLock(lockPath, fn, {
      timeoutMs: options.timeoutMs ?? 30_000,
      signal: options.signal,
    })
  } catch (error) {
    // Only its own lock's timeout: one from a lock taken inside `fn` (a restore's) is that lock's to report.
    if (!(error instanceof LockTimeoutError) || error.path !== lockPath) throw error
    throw new FleetkitError(
      'PKI_BUSY',
      `another fleetkit command${error.holder ? ` (PID ${error.holder})` : ''} is changing the PKI in ${pkiDir}; nothing was changed`,
      {
        actions: ['run it again once the other command has finished', error.removeAction],
        data: { pkiDir, holder: error.holder ?? null },
      },
    )
  }
}
