// Where a command's output goes when it is not a file: a sink that resolves only once the
// bytes were handed to the OS, so a closed pipe or a full disk is known before the state changes.
import { FleetkitError } from '../checks/fleetkit-error.js'

export type Sink = (bytes: Buffer | string) => Promise<void>

/**
 * A sink over a stream (process.stdout): rejects on EPIPE, ENOSPC and the like. While it writes,
 * it is the stream's only 'error' listener: oclif's own rethrows everything but EPIPE, which would
 * turn /dev/full into a crash instead of a coded error. A broken stream keeps only a quiet listener.
 */
export function streamSink(stream: NodeJS.WritableStream = process.stdout): Sink {
  return (bytes) =>
    new Promise<void>((resolve, reject) => {
      const others = stream.listeners('error') as ((error: Error) => void)[]
      stream.removeAllListeners('error')
      let failed = false
      const fail = (error: Error) => {
        if (failed) return
        failed = true
        reject(error)
      }
      stream.on('error', fail)
      const done = (error?: Error | null) => {
        if (error) return fail(error)
        stream.off('error', fail)
        for (const listener of others) stream.on('error', listener)
        resolve()
      }
      try {
        stream.write(bytes, done)
      } catch (error) {
        // A file descriptor (stdout redirected to a file) may be written synchronously.
        fail(error as Error)
      }
    })
}

/** The one error of a failed output write; what was about to change in the state did not. */
export function outputWriteFailed(path: string, error: unknown): FleetkitError {
  const errno = (error as NodeJS.ErrnoException | undefined)?.code ?? 'EIO'
  const shown = path === '-' ? 'standard output' : path
  return new FleetkitError('OUTPUT_WRITE_FAILED', `could not write ${shown} (${errno}); the state was left as it was`, {
    actions: [
      're-run with --output naming a writable file on a filesystem with free space',
      'or pipe --output - into a reader that reads it to the end',
    ],
    data: { path, errno },
    cause: error,
  })
}
