// A strict reader of DER (X.690) for the one structure a node sends: its PKCS#10 request (csr.ts).
// Strict on purpose: definite lengths in their shortest form, no element running past its parent,
// nothing after the last element; anything else throws DerError and the request is refused.

export class DerError extends Error {}

export interface DerElement {
  tag: number
  /** The whole element: header and content (what a signature covers when it is the signed part). */
  der: Buffer
  content: Buffer
}

/** The element at OFFSET of BUFFER and where the next one starts. */
function readAt(buffer: Buffer, offset: number): { element: DerElement; next: number } {
  if (offset + 2 > buffer.length) throw new DerError('truncated DER header')
  const tag = buffer[offset]!
  if ((tag & 0x1f) === 0x1f) throw new DerError('multi-byte DER tags are not used here')
  let length = buffer[offset + 1]!
  let header = 2
  if (length & 0x80) {
    const octets = length & 0x7f
    if (octets === 0) throw new DerError('indefinite length is not DER')
    if (octets > 3) throw new DerError('DER length too large')
    if (offset + 2 + octets > buffer.length) throw new DerError('truncated DER length')
    length = 0
    for (let i = 0; i < octets; i++) length = length * 256 + buffer[offset + 2 + i]!
    // The shortest form only: a long form for a short length, or a leading zero octet, is BER.
    if (length < 0x80 || buffer[offset + 2] === 0) throw new DerError('DER length not in its shortest form')
    header += octets
  }
  const end = offset + header + length
  if (end > buffer.length) throw new DerError('DER element runs past its container')
  return {
    element: { tag, der: buffer.subarray(offset, end), content: buffer.subarray(offset + header, end) },
    next: end,
  }
}

/** BUFFER as exactly one element. */
export function readOne(buffer: Buffer): DerElement {
  const { element, next } = readAt(buffer, 0)
  if (next !== buffer.length) throw new DerError('data after the DER element')
  return element
}

/** The elements of a constructed element's content, in order. */
export function children(parent: DerElement): DerElement[] {
  if ((parent.tag & 0x20) === 0) throw new DerError('a primitive DER element has no children')
  const out: DerElement[] = []
  for (let offset = 0; offset < parent.content.length;) {
    const { element, next } = readAt(parent.content, offset)
    out.push(element)
    offset = next
  }
  return out
}

/** ELEMENT, which must be there and have TAG (WHAT names it in the error). */
export function expect(element: DerElement | undefined, tag: number, what: string): DerElement {
  if (!element || element.tag !== tag) throw new DerError(`${what}: expected tag 0x${tag.toString(16)}`)
  return element
}

/** The dotted form of an OBJECT IDENTIFIER element. */
export function oidOf(element: DerElement): string {
  const bytes = expect(element, 0x06, 'OBJECT IDENTIFIER').content
  if (bytes.length === 0 || (bytes[bytes.length - 1]! & 0x80) !== 0) throw new DerError('bad OBJECT IDENTIFIER')
  const arcs: number[] = []
  let value = 0
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!
    if (value === 0 && byte === 0x80) throw new DerError('OBJECT IDENTIFIER arc not in its shortest form')
    value = value * 128 + (byte & 0x7f)
    if (!Number.isSafeInteger(value)) throw new DerError('OBJECT IDENTIFIER arc too large')
    if ((byte & 0x80) === 0) {
      if (arcs.length === 0) arcs.push(value < 80 ? Math.floor(value / 40) : 2, value < 80 ? value % 40 : value - 80)
      else arcs.push(value)
      value = 0
    }
  }
  return arcs.join('.')
}

/** The text of a directory string (PrintableString, UTF8String, IA5String); other string types throw. */
export function stringOf(element: DerElement): string {
  switch (element.tag) {
    case 0x13: // PrintableString
    case 0x16: // IA5String
      if (!/^[\x20-\x7e]*$/.test(element.content.toString('latin1'))) throw new DerError('non-ASCII in an ASCII string')
      return element.content.toString('ascii')
    case 0x0c: {
      const text = element.content.toString('utf8')
      if (!Buffer.from(text, 'utf8').equals(element.content)) throw new DerError('UTF8String is not UTF-8')
      return text
    }
    default:
      throw new DerError(`string type 0x${element.tag.toString(16)} is not accepted`)
  }
}
