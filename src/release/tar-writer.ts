// Writes a POSIX ustar archive holding exactly one regular file, byte for byte the same
// for the same input: fixed owner 0:0 (root/root), fixed mode and mtime, no extended headers.
import { BLOCK, ustarHeader } from '../fs/ustar.js'

/** GNU tar pads archives to 20 blocks; doing the same keeps every reader quiet. */
const RECORD = 20 * BLOCK

export interface TarFile {
  name: string
  mode: number
  mtime: number
  content: Uint8Array
}

export function singleFileTar(file: TarFile): Buffer {
  const header = ustarHeader({
    name: file.name,
    mode: file.mode,
    mtime: file.mtime,
    size: file.content.length,
    type: 'file',
    rootNames: true,
  })
  const dataBlocks = Math.ceil(file.content.length / BLOCK) * BLOCK
  const used = BLOCK + dataBlocks + 2 * BLOCK
  const total = Math.ceil(used / RECORD) * RECORD
  const archive = Buffer.alloc(total, 0)
  header.copy(archive, 0)
  Buffer.from(file.content.buffer, file.content.byteOffset, file.content.length).copy(archive, BLOCK)
  return archive
}
