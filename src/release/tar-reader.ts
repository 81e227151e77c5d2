// Lists the entries of an uncompressed tar archive (ustar, pax and GNU long names) without
// extracting anything, so a release can be judged by what it holds before a byte is written.
import { BLOCK, TarFormatError } from '../fs/ustar.js'
import { isEndBlock, readUstarHeader, UstarExtensions, type UstarEntryType } from '../fs/ustar-reader.js'

export interface TarEntry {
  name: string
  type: UstarEntryType
  typeflag: string
  mode: number
  uid: number
  gid: number
  size: number
  linkname: string
  /** Offset of the entry's data in the archive. */
  dataOffset: number
}

export function listTarEntries(archive: Buffer): TarEntry[] {
  const entries: TarEntry[] = []
  const extensions = new UstarExtensions()
  let pos = 0
  while (pos + BLOCK <= archive.length) {
    const block = archive.subarray(pos, pos + BLOCK)
    if (isEndBlock(block)) return entries
    const header = readUstarHeader(block, pos)
    const dataOffset = pos + BLOCK
    const next = dataOffset + Math.ceil(header.size / BLOCK) * BLOCK
    if (next > archive.length) throw new TarFormatError('archive ends inside an entry')
    pos = next
    if (extensions.absorb(header, archive.subarray(dataOffset, dataOffset + header.size))) continue
    const { name, type, typeflag, mode, uid, gid, size, linkname } = extensions.apply(header)
    entries.push({ name, type, typeflag, mode, uid, gid, size, linkname, dataOffset })
  }
  return entries
}
