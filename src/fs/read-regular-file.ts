// A local file an operator names (a release file, a CA file), read within a limit: a FIFO, a device or
// /dev/zero behind a link must neither hang the command nor fill its memory.
import { constants } from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'

/**
 * A local file, a link to one included, read no further than `maxBytes`: opened with O_NONBLOCK, so that a
 * FIFO does not wait for a writer, then refused unless it is a regular file (a FIFO or a device reports no
 * size to refuse by, and /dev/zero never ends); the limit is counted again while reading (a file that grows).
 * `fail` makes the error; `why` is the reason in words.
 */
export async function readRegularFile(
  path: string,
  maxBytes: number,
  fail: (why: string, data?: Record<string, unknown>) => Error,
): Promise<Buffer> {
  // The errors `fail` made are thrown as they are; anything else a read throws becomes one.
  const made = new WeakSet<object>()
  const failure = (why: string, data?: Record<string, unknown>) => {
    const error = fail(why, data)
    made.add(error)
    return error
  }
  let handle: FileHandle
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error'
    throw fail(code === 'ENOENT' || code === 'ENOTDIR' ? 'no such file' : `it cannot be opened (${code})`)
  }
  try {
    const info = await handle.stat()
    if (!info.isFile())
      throw failure('it is not a regular file (a directory, a FIFO or a device, perhaps through a link)')
    if (info.size > maxBytes)
      throw failure(`${info.size} bytes is over the limit of ${maxBytes}`, { expected: maxBytes, actual: info.size })
    const chunks: Buffer[] = []
    let total = 0
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(1024 * 1024, maxBytes + 1 - total))
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null)
      if (bytesRead === 0) return Buffer.concat(chunks, total)
      chunks.push(chunk.subarray(0, bytesRead))
      total += bytesRead
      if (total > maxBytes) throw failure(`more than the limit of ${maxBytes} bytes`, { expected: maxBytes })
    }
  } catch (error) {
    if (error instanceof Error && made.has(error)) throw error
    throw failure(`it cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
  } finally {
    await handle.close()
  }
}
