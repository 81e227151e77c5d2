// Where a command's output goes when it is not a file (a Sink the command gives: stdout), and the
// one error of an output that could not be written, before the state changed or after it.
import { FleetkitError } from '../checks/fleetkit-error.js'

/** Resolves only once the bytes were handed to the OS; rejects on EPIPE, ENOSPC and the like. */
export type Sink = (bytes: Buffer | string) => Promise<void>

/** The one error of a failed output write before anything was stored: the state was left as it was. */
export function outputWriteFailed(path: string, error: unknown): FleetkitError {
  const errno = errnoOf(error)
  return new FleetkitError(
    'OUTPUT_WRITE_FAILED',
    `could not write ${shown(path)} (${errno}); the state was left as it was`,
    {
      actions: [
        're-run with --output naming a writable file on a filesystem with free space',
        'or pipe --output - into a reader that reads it to the end',
      ],
      data: { path, errno, committed: false },
      cause: error,
    },
  )
}

/**
 * The output of a change already committed could not be written (a closed pipe, a full disk).
 * A secret is printed only after its hash is stored, so one that was never shown is still the
 * node's valid secret, and nobody holds it: `next` is the command that replaces it (a reissue).
 */
export function outputLostAfterCommit(
  path: string,
  error: unknown,
  what: string,
  next: readonly string[],
): FleetkitError {
  const errno = errnoOf(error)
  return new FleetkitError(
    'OUTPUT_WRITE_FAILED',
    `could not write ${shown(path)} (${errno}) after ${what} was stored: it was never shown, and cannot be shown again`,
    { actions: [...next], data: { path, errno, committed: true }, cause: error },
  )
}

function errnoOf(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? 'EIO'
}

function shown(path: string): string {
  return path === '-' ? 'standard output' : path
}
