// Writes a POSIX ustar archive holding exactly one regular file, byte for byte the same
// for the same input: fixed owner 0:0 (root/root), fixed mode and mtime, no extended headers.
const BLOCK = 512
/** GNU tar pads archives to 20 blocks; doing the same keeps every reader quiet. */
const RECORD = 20 * BLOCK

export interface TarFile {
  name: string
  mode: number
  mtime: number
  content: Uint8Array
}

function writeString(header: Buffer, offset: number, length: number, value: string): void {
  const bytes = Buffer.from(value, 'utf8')
  if (bytes.length > length) throw new Error(`tar field too long: ${value}`)
  bytes.copy(header, offset)
}

/** An octal number in `length - 1` digits and a NUL, as ustar numeric fields are. */
function writeOctal(header: Buffer, offset: number, length: number, value: number): void {
  const digits = value.toString(8).padStart(length - 1, '0')
  if (digits.length > length - 1) throw new Error(`tar number too large: ${value}`)
  writeString(header, offset, length, `${digits}\0`)
}

export function ustarHeader(file: { name: string; mode: number; mtime: number; size: number }): Buffer {
  if (Buffer.byteLength(file.name) > 100) throw new Error(`tar name too long: ${file.name}`)
  const header = Buffer.alloc(BLOCK, 0)
  writeString(header, 0, 100, file.name)
  writeOctal(header, 100, 8, file.mode)
  writeOctal(header, 108, 8, 0) // uid
  writeOctal(header, 116, 8, 0) // gid
  writeOctal(header, 124, 12, file.size)
  writeOctal(header, 136, 12, file.mtime)
  header.fill(0x20, 148, 156) // the checksum is computed with its own field as spaces
  header[156] = 0x30 // typeflag '0': regular file
  writeString(header, 257, 6, 'ustar\0')
  writeString(header, 263, 2, '00')
  writeString(header, 265, 32, 'root')
  writeString(header, 297, 32, 'root')
  writeOctal(header, 329, 8, 0) // devmajor
  writeOctal(header, 337, 8, 0) // devminor
  let sum = 0
  for (const byte of header) sum += byte
  writeString(header, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `)
  return header
}

export function singleFileTar(file: TarFile): Buffer {
  const header = ustarHeader({ name: file.name, mode: file.mode, mtime: file.mtime, size: file.content.length })
  const dataBlocks = Math.ceil(file.content.length / BLOCK) * BLOCK
  const used = BLOCK + dataBlocks + 2 * BLOCK
  const total = Math.ceil(used / RECORD) * RECORD
  const archive = Buffer.alloc(total, 0)
  header.copy(archive, 0)
  Buffer.from(file.content.buffer, file.content.byteOffset, file.content.length).copy(archive, BLOCK)
  return archive
}
