// The client certificate's DER out of the connection's TLS session, with nothing decoded.
// getPeerX509Certificate() duplicates the certificate through OpenSSL 3.0's decoders, which decode its
// public key again: about 150 µs on the first call per connection, the largest single cost the gateway
// added to a handshake (docs/performance.md, issue 40). The serialized session (getSession(), about
// 15 µs) already holds the peer certificate OpenSSL verified, as DER: OpenSSL's SSL_SESSION encoding
// (ssl/ssl_asn1.c) carries it as `peer [3] EXPLICIT Certificate`, for TLS 1.2 and 1.3, full or resumed.
import { children, readOne } from '../../pki/der-reader.js'

const PEER_TAG = 0xa3
const SEQUENCE = 0x30

/** The peer certificate's DER in a serialized SSL_SESSION, or undefined when it holds none or does not parse. */
export function peerCertificateOfSession(session: Buffer): Buffer | undefined {
  try {
    const fields = children(readOne(session))
    const peer = fields.find((f) => f.tag === PEER_TAG)
    if (peer === undefined) return undefined
    const inner = children(peer)
    return inner.length === 1 && inner[0]!.tag === SEQUENCE ? inner[0]!.der : undefined
  } catch {
    return undefined
  }
}
