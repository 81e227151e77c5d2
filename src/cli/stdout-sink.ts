// A Sink over a stream (process.stdout) for the output a command prints itself: it resolves only
// once the bytes were handed to the OS, so a closed pipe or a full disk is an error the command sees.
/**
 * Rejects on EPIPE, ENOSPC and the like. While it writes, it is the stream's only 'error'
 * listener: oclif's own rethrows everything but EPIPE, which would turn /dev/full into a crash
 * instead of a coded error. A broken stream keeps only a quiet listener.
 */
export function streamSink(stream: NodeJS.WritableStream = process.stdout): (bytes: Buffer | string) => Promise<void> {
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
