// POSIX ustar headers, written one way for every archive fleetkit makes (a release's single file, a
// backup's members): owner 0:0, no extended headers, long names split into ustar's prefix field.
export const BLOCK = 512

/** An archive fleetkit cannot write or will not read (a name too long, a member it refuses). */
export class TarFormatError extends Error {}

export interface UstarEntry {
  name: string
  mode: number
  size: number
  mtime: number
  type: 'file' | 'directory'
  /** uname and gname 'root' (a release, as GNU tar writes them for root's files); empty otherwise. */
  rootNames?: boolean
}

function putString(header: Buffer, offset: number, length: number, value: string): void {
  const bytes = Buffer.from(value, 'utf8')
  if (bytes.length > length) throw new TarFormatError(`tar field too long: ${value}`)
  bytes.copy(header, offset)
}

/** An octal number in `length - 1` digits and a NUL, as ustar numeric fields are. */
function putOctal(header: Buffer, offset: number, length: number, value: number): void {
  const digits = value.toString(8).padStart(length - 1, '0')
  if (digits.length > length - 1) throw new TarFormatError(`tar number too large: ${value}`)
  putString(header, offset, length, `${digits}\0`)
}

/** Splits a name into ustar's prefix (155) and name (100) fields at a slash. */
function splitName(name: string): { prefix: string; base: string } {
  if (Buffer.byteLength(name) <= 100) return { prefix: '', base: name }
  for (let i = name.length - 1; i > 0; i--) {
    if (name[i] !== '/') continue
    const prefix = name.slice(0, i)
    const base = name.slice(i + 1)
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(base) <= 100 && base !== '') return { prefix, base }
  }
  throw new TarFormatError(`tar name too long: ${name}`)
}

export function ustarHeader(entry: UstarEntry): Buffer {
  const block = Buffer.alloc(BLOCK, 0)
  const { prefix, base } = splitName(entry.name)
  putString(block, 0, 100, base)
  putOctal(block, 100, 8, entry.mode & 0o7777)
  putOctal(block, 108, 8, 0) // uid
  putOctal(block, 116, 8, 0) // gid
  putOctal(block, 124, 12, entry.size)
  putOctal(block, 136, 12, entry.mtime)
  block.fill(0x20, 148, 156) // the checksum is computed with its own field as spaces
  block[156] = entry.type === 'directory' ? 0x35 : 0x30
  putString(block, 257, 6, 'ustar\0')
  putString(block, 263, 2, '00')
  if (entry.rootNames) {
    putString(block, 265, 32, 'root')
    putString(block, 297, 32, 'root')
  }
  putOctal(block, 329, 8, 0) // devmajor
  putOctal(block, 337, 8, 0) // devminor
  putString(block, 345, 155, prefix)
  let sum = 0
  for (const byte of block) sum += byte
  putString(block, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `)
  return block
}
