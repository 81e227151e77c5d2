// The client certificate's DER out of the connection's TLS session, with nothing decoded.
// getPeerX509Certificate() duplicates the certificate through OpenSSL 3.0's decoders, which decode its
// public key again: about 150 µs on the first call per connection, the largest single cost the gateway
// added to a handshake (docs/performance.md, issue 40). The serialized session (getSession(), about
// 15 µs) already holds the peer certificate OpenSSL verified, as DER: OpenSSL's SSL_SESSION encoding
// (ssl/ssl_asn1.c) carries it as `peer [3] EXPLICIT Certificate`, for TLS 1.2 and 1.3, full or resumed.
const PEER_TAG = 0xa3
const SEQUENCE = 0x30

/**
 * The peer certificate's DER in a serialized SSL_SESSION, or undefined when it holds none or does not parse.
 * The session's fields are walked by their headers only, up to `peer`, with nothing allocated but the
 * certificate's view: this runs once per connection, right after a handshake has evicted the caches,
 * where der-reader's element objects for every field cost about as much again (measured, issue 40).
 * The headers are read as strictly as der-reader reads them (one-byte tags, shortest-form definite lengths,
 * nothing past its container).
 */
export function peerCertificateOfSession(session: Buffer): Buffer | undefined {
  if (session[0] !== SEQUENCE || !readHeader(session, 0, session.length) || elementEnd !== session.length)
    return undefined
  const end = elementEnd
  for (let at = contentStart; at < end; at = elementEnd) {
    if (!readHeader(session, at, end)) return undefined
    if (session[at] !== PEER_TAG) continue
    const peerEnd = elementEnd
    const certificateAt = contentStart
    // `peer [3] EXPLICIT Certificate`: exactly one SEQUENCE inside.
    if (session[certificateAt] !== SEQUENCE || !readHeader(session, certificateAt, peerEnd)) return undefined
    return elementEnd === peerEnd ? session.subarray(certificateAt, peerEnd) : undefined
  }
  return undefined
}

/** Where the last header read says its element's content starts and where the element ends. */
let contentStart = 0
let elementEnd = 0

/** Reads the header of the element at `at` (which must end by `limit`) into contentStart and elementEnd. */
function readHeader(buffer: Buffer, at: number, limit: number): boolean {
  if (at + 2 > limit) return false
  if ((buffer[at]! & 0x1f) === 0x1f) return false
  let length = buffer[at + 1]!
  let header = 2
  if (length & 0x80) {
    const octets = length & 0x7f
    if (octets === 0 || octets > 3 || at + 2 + octets > limit || buffer[at + 2] === 0) return false
    length = 0
    for (let i = 0; i < octets; i++) length = length * 256 + buffer[at + 2 + i]!
    if (length < 0x80) return false
    header += octets
  }
  contentStart = at + header
  elementEnd = contentStart + length
  return elementEnd <= limit
}
