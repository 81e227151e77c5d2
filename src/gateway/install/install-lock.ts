// One `gateway install` or `uninstall` at a time on a machine: both run useradd, write the unit and
// start or stop the service, and two operators doing that at once would each act on half of the other's
// work (a second useradd failing, the service restarted twice, an uninstall in the middle of an install).
// The lock is a file in /run/lock held with the holder's PID (src/fs/file-lock.ts: a dead holder's lock is
// broken); whoever waits runs after the holder, judges the machine again and finds the work done.
import { FleetkitError } from '../../checks/fleetkit-error.js'
import { type FileLockOptions, LockTimeoutError, withFileLock } from '../../fs/file-lock.js'

/** The lock file: /run/lock is the FHS place for a machine's lock files, emptied at boot. */
const INSTALL_LOCK_PATH = '/run/lock/fleetkit-gateway-install.lock'

/** An install waits for the unit's start and its database (up to 120 s): a waiter waits longer than that. */
const WAIT_MS = 5 * 60_000

export interface InstallLockOptions extends Pick<FileLockOptions, 'timeoutMs' | 'pollMs'> {
  path?: string
  /** Told once, when another install or uninstall holds the lock. */
  onWait?: (message: string) => void
}

export async function withInstallLock<T>(
  verb: 'install' | 'uninstall',
  fn: () => Promise<T>,
  options: InstallLockOptions = {},
): Promise<T> {
  const path = options.path ?? INSTALL_LOCK_PATH
  try {
    return await withFileLock(path, fn, {
      timeoutMs: options.timeoutMs ?? WAIT_MS,
      pollMs: options.pollMs ?? 100,
      onWait: (holder) =>
        options.onWait?.(`waiting for another fleetkit gateway install or uninstall (PID ${holder}) to finish`),
    })
  } catch (error) {
    // Only its own lock's timeout: one from a lock taken inside `fn` is that lock's to report.
    if (!(error instanceof LockTimeoutError) || error.path !== path) throw error
    throw new FleetkitError(
      'GATEWAY_INSTALL_BUSY',
      `another fleetkit gateway install or uninstall${error.holder ? ` (PID ${error.holder})` : ''} holds ${path}; nothing was changed`,
      {
        actions: [`wait for it to finish, then run fleetkit gateway ${verb} again`, error.removeAction],
        data: { lockFile: path, holder: error.holder ?? null },
        cause: error,
      },
    )
  }
}
