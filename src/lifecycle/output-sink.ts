// Where a command's output goes when it is not a file: a sink that resolves only once the
// bytes were handed to the OS, so a closed pipe or a full disk is known before the state changes.
import { FleetkitError } from '../checks/fleetkit-error.js'

export type Sink = (bytes: Buffer | string) => Promise<void>

/** A sink over a stream (process.stdout): rejects on EPIPE, ENOSPC and the like instead of crashing. */
export function streamSink(stream: NodeJS.WritableStream = process.stdout): Sink {
  // A late 'error' (EPIPE after the callback) must not crash the process with an unhandled event.
  stream.on('error', () => {})
  return (bytes) =>
    new Promise<void>((resolve, reject) => {
      const onError = (error: Error) => reject(error)
      stream.once('error', onError)
      try {
        stream.write(bytes, (error) => {
          stream.off('error', onError)
          if (error) reject(error)
          else resolve()
        })
      } catch (error) {
        // A file descriptor (stdout redirected to a file or /dev/full) is written synchronously.
        stream.off('error', onError)
        reject(error as Error)
      }
    })
}

/** The one error of a failed output write; what was about to change in the state did not. */
export function outputWriteFailed(path: string, error: unknown): FleetkitError {
  const errno = (error as NodeJS.ErrnoException | undefined)?.code ?? 'EIO'
  const shown = path === '-' ? 'standard output' : path
  return new FleetkitError('OUTPUT_WRITE_FAILED', `could not write ${shown} (${errno}); the state was left as it was`, {
    actions: ['re-run with --output naming a writable file on a filesystem with free space', 'or pipe --output - into a reader that reads it to the end'],
    data: { path, errno },
    cause: error,
  })
}
