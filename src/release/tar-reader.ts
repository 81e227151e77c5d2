// Lists the entries of an uncompressed tar archive (ustar, pax and GNU long names) without
// extracting anything, so a release can be judged by what it holds before a byte is written.
import { BLOCK, TarFormatError } from '../fs/ustar.js'

type TarEntryType = 'file' | 'hardlink' | 'symlink' | 'directory' | 'other'

export interface TarEntry {
  name: string
  type: TarEntryType
  typeflag: string
  mode: number
  uid: number
  gid: number
  size: number
  linkname: string
  /** Offset of the entry's data in the archive. */
  dataOffset: number
}

function field(block: Buffer, offset: number, length: number): string {
  const slice = block.subarray(offset, offset + length)
  const end = slice.indexOf(0)
  return slice.subarray(0, end === -1 ? length : end).toString('utf8')
}

function octal(block: Buffer, offset: number, length: number): number {
  if ((block[offset]! & 0x80) !== 0) throw new TarFormatError('base-256 numeric fields are not accepted')
  const text = field(block, offset, length).trim()
  if (text === '') return 0
  if (!/^[0-7]+$/.test(text)) throw new TarFormatError(`bad octal field ${JSON.stringify(text)}`)
  return Number.parseInt(text, 8)
}

function checksumOk(block: Buffer): boolean {
  let sum = 0
  for (let i = 0; i < BLOCK; i += 1) sum += i >= 148 && i < 156 ? 0x20 : block[i]!
  return sum === octal(block, 148, 8)
}

function typeOf(flag: string): TarEntryType {
  if (flag === '0' || flag === '\0' || flag === '' || flag === '7') return 'file'
  if (flag === '1') return 'hardlink'
  if (flag === '2') return 'symlink'
  if (flag === '5') return 'directory'
  return 'other'
}

/** "<len> key=value\n" records of a pax extended header. */
function paxRecords(data: Buffer): Map<string, string> {
  const records = new Map<string, string>()
  let pos = 0
  while (pos < data.length) {
    const space = data.indexOf(0x20, pos)
    if (space === -1) break
    const length = Number.parseInt(data.subarray(pos, space).toString('ascii'), 10)
    if (!Number.isInteger(length) || length <= 0 || pos + length > data.length)
      throw new TarFormatError('bad pax record')
    const record = data.subarray(space + 1, pos + length - 1).toString('utf8')
    const eq = record.indexOf('=')
    if (eq > 0) records.set(record.slice(0, eq), record.slice(eq + 1))
    pos += length
  }
  return records
}

export function listTarEntries(archive: Buffer): TarEntry[] {
  const entries: TarEntry[] = []
  let pos = 0
  let longName: string | undefined
  let longLink: string | undefined
  let pax = new Map<string, string>()
  while (pos + BLOCK <= archive.length) {
    const block = archive.subarray(pos, pos + BLOCK)
    if (block.every((byte) => byte === 0)) return entries
    if (!checksumOk(block)) throw new TarFormatError(`bad header checksum at offset ${pos}`)
    const flag = String.fromCharCode(block[156]!)
    const size = octal(block, 124, 12)
    const dataOffset = pos + BLOCK
    const next = dataOffset + Math.ceil(size / BLOCK) * BLOCK
    if (next > archive.length) throw new TarFormatError('archive ends inside an entry')
    const data = archive.subarray(dataOffset, dataOffset + size)
    pos = next
    // Extension headers describe the entry that follows; they are not entries themselves.
    if (flag === 'L') {
      longName = field(data, 0, data.length)
      continue
    }
    if (flag === 'K') {
      longLink = field(data, 0, data.length)
      continue
    }
    if (flag === 'x') {
      pax = paxRecords(data)
      continue
    }
    if (flag === 'g') continue
    const magic = field(block, 257, 6)
    const prefix = magic === 'ustar' ? field(block, 345, 155) : ''
    const plainName = field(block, 0, 100)
    const name = pax.get('path') ?? longName ?? (prefix === '' ? plainName : `${prefix}/${plainName}`)
    const linkname = pax.get('linkpath') ?? longLink ?? field(block, 157, 100)
    // A pax size that differs from the header's (files over 8 GiB) is beyond any agent binary.
    if (pax.has('size') && Number(pax.get('size')) !== size)
      throw new TarFormatError('pax size differs from the header size')
    entries.push({
      name,
      type: typeOf(flag),
      typeflag: flag,
      mode: octal(block, 100, 8),
      uid: octal(block, 108, 8),
      gid: octal(block, 116, 8),
      size,
      linkname,
      dataOffset,
    })
    longName = undefined
    longLink = undefined
    pax = new Map()
  }
  return entries
}
