// Files on a disk with `room` bytes left, written as the kernel writes them: a write that does not fit writes
// what fits and says so only in bytesWritten; the next one fails with ENOSPC (no path). With `resumes`, space
// comes back after each short write (a write is short for other reasons too). For the archive writer and
// extractor's injected `open` (src/fs/tar-gz.ts).
import { open } from 'node:fs/promises'

import type { OpenArchiveFile } from '../../src/fs/tar-gz.js'

export interface SmallDisk {
  open: OpenArchiveFile
  /** How many writes were short so far. */
  shortWrites: number
  /** How many bytes reached the disk so far. */
  written: number
}

export function smallDisk(room: number, options: { resumes?: boolean } = {}): SmallDisk {
  const disk: SmallDisk = { shortWrites: 0, written: 0, open: undefined as unknown as OpenArchiveFile }
  let left = room
  disk.open = async (path, flags, mode) => {
    const real = await open(path, flags, mode)
    return {
      chmod: (m) => real.chmod(m),
      chown: (uid, gid) => real.chown(uid, gid),
      sync: () => real.sync(),
      close: () => real.close(),
      async write(buffer, offset, length) {
        if (left === 0)
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' })
        const taken = Math.min(length, left)
        if (taken < length) {
          disk.shortWrites++
          left = options.resumes ? Number.MAX_SAFE_INTEGER : 0
        } else left -= taken
        disk.written += taken
        return real.write(buffer, offset, taken)
      },
    }
  }
  return disk
}
