// The few DER encodings a node's client certificate needs (X.690), written directly: building the
// certificate through an ASN.1 schema library cost about 3 ms per enrollment, most of the issuance
// worker's time (docs/performance.md). Encoding only; every parse stays with @peculiar/x509 and OpenSSL.

/** One DER element: TAG, its definite length, CONTENT. */
export function tlv(tag: number, content: Buffer): Buffer {
  const length = content.length
  let header: Buffer
  if (length < 0x80) header = Buffer.from([tag, length])
  else if (length < 0x100) header = Buffer.from([tag, 0x81, length])
  else if (length < 0x10000) header = Buffer.from([tag, 0x82, length >> 8, length & 0xff])
  else if (length < 0x1000000) header = Buffer.from([tag, 0x83, length >> 16, (length >> 8) & 0xff, length & 0xff])
  else throw new RangeError(`DER element of ${length} bytes is larger than a certificate holds`)
  return Buffer.concat([header, content])
}

export const sequence = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items))
export const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items))
/** [n] EXPLICIT: a constructed context-specific wrapper around one element. */
export const explicit = (n: number, element: Buffer): Buffer => tlv(0xa0 | n, element)
export const octetString = (content: Buffer): Buffer => tlv(0x04, content)
export const booleanTrue = (): Buffer => Buffer.from([0x01, 0x01, 0xff])

/** A non-negative INTEGER from its big-endian hex digits (a leading 00 added when the top bit is set). */
export function unsignedInteger(hex: string): Buffer {
  if (!/^(?:[0-9a-f]{2})+$/i.test(hex)) throw new RangeError('an INTEGER needs whole bytes of hex digits')
  let bytes = Buffer.from(hex, 'hex')
  let start = 0
  while (start < bytes.length - 1 && bytes[start] === 0 && bytes[start + 1]! < 0x80) start++
  bytes = bytes.subarray(start)
  return tlv(0x02, bytes[0]! >= 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes)
}

/** An OBJECT IDENTIFIER from its dotted form. */
export function objectIdentifier(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number)
  if (arcs.length < 2 || arcs.some((a) => !Number.isSafeInteger(a) || a < 0)) throw new RangeError(`bad OID ${dotted}`)
  const out: number[] = []
  for (const arc of [arcs[0]! * 40 + arcs[1]!, ...arcs.slice(2)]) {
    const base128 = [arc & 0x7f]
    for (let rest = Math.floor(arc / 128); rest > 0; rest = Math.floor(rest / 128))
      base128.unshift((rest & 0x7f) | 0x80)
    out.push(...base128)
  }
  return tlv(0x06, Buffer.from(out))
}

/** PrintableString's alphabet (X.680): a name within it is encoded so, any other as UTF8String. */
const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/

/** A directory string as X.509 names carry it: PrintableString when it can be, else UTF8String. */
export function directoryString(value: string): Buffer {
  return PRINTABLE.test(value) ? tlv(0x13, Buffer.from(value, 'ascii')) : tlv(0x0c, Buffer.from(value, 'utf8'))
}

/** RFC 5280 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050; whole seconds, Zulu. */
export function certificateTime(date: Date): Buffer {
  const iso = date.toISOString() // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits =
    iso.slice(0, 4) + iso.slice(5, 7) + iso.slice(8, 10) + iso.slice(11, 13) + iso.slice(14, 16) + iso.slice(17, 19)
  const year = date.getUTCFullYear()
  if (year < 1950 || year > 9999) throw new RangeError(`a certificate time in ${year} cannot be encoded`)
  return year < 2050
    ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`, 'ascii'))
    : tlv(0x18, Buffer.from(`${digits}Z`, 'ascii'))
}

/** A BIT STRING of whole bytes (no unused bits), as a signature is. */
export const bitString = (content: Buffer): Buffer => tlv(0x03, Buffer.concat([Buffer.from([0]), content]))
