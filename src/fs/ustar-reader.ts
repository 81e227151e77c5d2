// The one reader of tar headers (a release listed before it is trusted, a backup extracted): every
// field of a 512-byte block read strictly, so a hostile archive is refused the same way everywhere.
import { BLOCK, TarFormatError } from './ustar.js'

export type UstarEntryType = 'file' | 'hardlink' | 'symlink' | 'directory' | 'other'

/** One header block as read: numbers checked, names as written (judging them is the caller's). */
export interface UstarHeaderFields {
  /** The header's own name, with ustar's prefix field when the block is POSIX ustar. */
  name: string
  linkname: string
  typeflag: string
  type: UstarEntryType
  /** All twelve mode bits as written; callers mask what they keep. */
  mode: number
  uid: number
  gid: number
  size: number
  /** 'posix' (magic "ustar\0"), 'gnu' ("ustar  ", whose prefix field holds other things) or 'v7' (no magic). */
  format: 'posix' | 'gnu' | 'v7'
}

function field(block: Buffer, offset: number, length: number): string {
  const slice = block.subarray(offset, offset + length)
  const end = slice.indexOf(0)
  return slice.subarray(0, end === -1 ? length : end).toString('utf8')
}

/**
 * An octal numeric field. Base-256 (the high bit set, GNU's form for huge sizes and ids) is refused:
 * nothing fleetkit reads needs it, and a second number grammar is a second place to get wrong.
 */
function octal(block: Buffer, offset: number, length: number): number {
  if ((block[offset]! & 0x80) !== 0) throw new TarFormatError('base-256 numeric fields are not accepted')
  const text = field(block, offset, length).trim()
  if (text === '') return 0
  if (!/^[0-7]+$/.test(text)) throw new TarFormatError(`bad octal field ${JSON.stringify(text)}`)
  return Number.parseInt(text, 8)
}

function typeOf(flag: string): UstarEntryType {
  if (flag === '0' || flag === '\0' || flag === '7') return 'file'
  if (flag === '1') return 'hardlink'
  if (flag === '2') return 'symlink'
  if (flag === '5') return 'directory'
  return 'other'
}

/** The two zero blocks that end an archive start with one. */
export function isEndBlock(block: Buffer): boolean {
  return block.every((byte) => byte === 0)
}

/**
 * Reads one header block, refusing a bad checksum (damage, or a block that is not a header at
 * all) before any field is believed. `offset` only names the block in the error.
 */
export function readUstarHeader(block: Buffer, offset = 0): UstarHeaderFields {
  if (block.length !== BLOCK) throw new TarFormatError(`a tar header is ${BLOCK} bytes, not ${block.length}`)
  let sum = 0
  for (let i = 0; i < BLOCK; i += 1) sum += i >= 148 && i < 156 ? 0x20 : block[i]!
  if (sum !== octal(block, 148, 8))
    throw new TarFormatError(`a member header is damaged (bad checksum at offset ${offset})`)
  const magic = block.subarray(257, 263).toString('latin1')
  const format = magic === 'ustar\0' ? 'posix' : magic === 'ustar ' ? 'gnu' : 'v7'
  const prefix = format === 'posix' ? field(block, 345, 155) : ''
  const base = field(block, 0, 100)
  const typeflag = String.fromCharCode(block[156]!)
  return {
    name: prefix === '' ? base : `${prefix}/${base}`,
    linkname: field(block, 157, 100),
    typeflag,
    type: typeOf(typeflag),
    mode: octal(block, 100, 8),
    uid: octal(block, 108, 8),
    gid: octal(block, 116, 8),
    size: octal(block, 124, 12),
    format,
  }
}

/** "<len> key=value\n" records of a pax extended header. */
function paxRecords(data: Buffer): Map<string, string> {
  const records = new Map<string, string>()
  let pos = 0
  while (pos < data.length) {
    const space = data.indexOf(0x20, pos)
    if (space === -1) break
    const length = Number.parseInt(data.subarray(pos, space).toString('ascii'), 10)
    // Each record ends in the newline its length points at: anything else is not the record it claims.
    if (!Number.isInteger(length) || length <= 0 || pos + length > data.length || space >= pos + length)
      throw new TarFormatError('bad pax record')
    if (data[pos + length - 1] !== 0x0a) throw new TarFormatError('bad pax record')
    const record = data.subarray(space + 1, pos + length - 1).toString('utf8')
    const eq = record.indexOf('=')
    if (eq > 0) records.set(record.slice(0, eq), record.slice(eq + 1))
    pos += length
  }
  return records
}

/**
 * Extension headers (pax 'x', GNU 'L' and 'K') describe the member that follows them and are no
 * member themselves. This holds what they said until that member's header comes.
 */
export class UstarExtensions {
  private longName: string | undefined
  private longLink: string | undefined
  private pax = new Map<string, string>()

  /** Takes in an extension header and its data; false when `header` is a member's own. */
  absorb(header: UstarHeaderFields, data: Buffer): boolean {
    if (header.typeflag === 'L') this.longName = field(data, 0, data.length)
    else if (header.typeflag === 'K') this.longLink = field(data, 0, data.length)
    else if (header.typeflag === 'x') this.pax = paxRecords(data)
    // A global pax header ('g') sets defaults fleetkit does not use: skipped, as before.
    else if (header.typeflag !== 'g') return false
    return true
  }

  /** The member's header with the names the extension headers gave it; they apply to this member only. */
  apply(header: UstarHeaderFields): UstarHeaderFields {
    const pax = this.pax
    // A pax size that differs from the header's (files over 8 GiB) is beyond anything fleetkit reads.
    if (pax.has('size') && Number(pax.get('size')) !== header.size)
      throw new TarFormatError('pax size differs from the header size')
    const member = {
      ...header,
      name: pax.get('path') ?? this.longName ?? header.name,
      linkname: pax.get('linkpath') ?? this.longLink ?? header.linkname,
    }
    this.longName = undefined
    this.longLink = undefined
    this.pax = new Map()
    return member
  }
}

/**
 * A member name that stays inside the directory it is extracted to: relative, no `.` or `..`, no
 * empty parts, no NUL. Returned with '/' separators and without a directory's trailing slash.
 */
export function safeMemberName(name: string): string {
  const trimmed = name.endsWith('/') ? name.slice(0, -1) : name
  const parts = trimmed.split('/')
  if (
    trimmed === '' ||
    trimmed.startsWith('/') ||
    trimmed.includes('\0') ||
    parts.some((p) => p === '' || p === '.' || p === '..')
  )
    throw new TarFormatError(`unsafe member name ${JSON.stringify(name)}`)
  return trimmed
}
