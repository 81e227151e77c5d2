// Agent authentication on the mTLS listener: the TLS handshake proved the chain; here
// the presented certificate must also be a live row of node_certificates for a node
// that may connect. Rows are cached per fingerprint; revocations anywhere evict (auth-cache.ts).
import type { TLSSocket } from 'node:tls'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { derFingerprintSha256, fingerprint256Hex } from '../../pki/fingerprint.js'
import {
  findCertificatesByFingerprints,
  listLiveCertificates,
  markFirstUseAndRevokeOlder,
  type PresentedCertificate,
} from '../../store/pki/certificates.js'
import type { Queryable } from '../../store/database.js'
import { appendEvent } from '../../store/events.js'
import { BatchLoader } from '../load/batch-loader.js'
import { peerCertificateOfSession } from '../tls/session-peer.js'

/**
 * Node statuses whose agents may authenticate (each route then decides what they may do). `parked` too:
 * park is reversible and keeps the identity, so a parked node's agent heartbeats and renews (leases are
 * refused) and is back at `node unpark` by itself, instead of taking a 401 that stops it for good.
 */
export const AUTHENTICATED_STATUSES = new Set(['active', 'unhealthy', 'draining', 'lost', 'parked'])

/** Certificate rows a starting gateway reads into its cache at most (the cache clears itself above 100,000). */
const WARM_MAX_ROWS = 50_000
/** Rows per warm-up query: parsing a page runs on the event loop, so pages stay small (about 40 ms each). */
const WARM_PAGE_ROWS = 500

export interface AgentIdentity {
  nodeId: string
  nodeStatus: string
  certificate: PresentedCertificate
}

export interface AgentAuthenticatorOptions {
  pool: Queryable
  /** How long a looked-up row is reused (default 1000 ms; 0 disables the cache). */
  cacheMs?: number
  onRefusal?: (reason: string) => void
  onRevoked?: (count: number) => void
}

interface CacheEntry {
  certificate: PresentedCertificate
  expiresMs: number
}

/**
 * The SHA-256 of the socket's client certificate, computed once per connection and kept with the
 * socket: a keep-alive connection carries many requests. The certificate's DER is taken from the
 * serialized TLS session (session-peer.ts: no decoding, about 20 µs with the hash); only when that
 * holds none is it getPeerX509Certificate()'s, which re-decodes the certificate in OpenSSL 3.0 (about
 * 150 µs a connection, measured: docs/performance.md, issue 40). Both give the SHA-256 of the same DER.
 */
const socketFingerprints = new WeakMap<TLSSocket, string | null>()

export function peerFingerprint(socket: TLSSocket): string | null {
  const known = socketFingerprints.get(socket)
  if (known !== undefined) return known
  let fingerprint: string | null = null
  if (socket.authorized) {
    const session = typeof socket.getSession === 'function' ? socket.getSession() : undefined
    const der = session ? peerCertificateOfSession(session) : undefined
    if (der) fingerprint = derFingerprintSha256(der)
    else if (typeof socket.getPeerX509Certificate === 'function') {
      const peer = socket.getPeerX509Certificate()
      fingerprint = peer ? fingerprint256Hex(peer.fingerprint256) : null
    }
  }
  socketFingerprints.set(socket, fingerprint)
  return fingerprint
}

export class AgentAuthenticator {
  private readonly cache = new Map<string, CacheEntry>()
  private cacheMs: number
  /** Misses of one event-loop turn are read in one query (a reconnect storm misses for every agent at once). */
  private readonly rows: BatchLoader<PresentedCertificate>
  /**
   * Counts evictions: a row read while one happened may predate the change that caused it (the
   * announcement came before the row), so it serves its request but is not cached.
   */
  private evictions = 0

  constructor(private readonly options: AgentAuthenticatorOptions) {
    this.cacheMs = options.cacheMs ?? 1000
    this.rows = new BatchLoader((fingerprints) => findCertificatesByFingerprints(options.pool, fingerprints))
  }

  /** Change how long rows are reused from now on (short while revocations cannot be heard). */
  setCacheMs(ms: number): void {
    this.cacheMs = ms
  }

  /** The fingerprints cached now (the periodic re-check reads their rows again). */
  cachedFingerprints(): string[] {
    return [...this.cache.keys()]
  }

  /** Forget one row. */
  evictFingerprint(fingerprint: string): void {
    this.evictions++
    this.cache.delete(fingerprint)
  }

  /** Forget every row (announcements may have been missed). */
  clear(): void {
    this.evictions++
    this.cache.clear()
  }

  /**
   * Read the rows of every certificate agents may connect with now into the cache, a page at a time
   * (at most `maxRows`): after a gateway restart every agent reconnects at once, and each would miss.
   * A page read while an eviction happened is not kept (a row in it may predate the change). The rows'
   * lifetimes are spread over the second half of the cache time, so they do not all expire together.
   * Returns how many rows were kept.
   */
  async warm(maxRows = WARM_MAX_ROWS): Promise<number> {
    let after = ''
    let read = 0
    let kept = 0
    while (read < maxRows) {
      const evictions = this.evictions
      const page = await listLiveCertificates(
        this.options.pool,
        [...AUTHENTICATED_STATUSES],
        after,
        Math.min(WARM_PAGE_ROWS, maxRows - read),
      )
      if (this.evictions === evictions) {
        for (const [i, certificate] of page.entries()) this.remember(certificate, 0.5 + ((read + i) % 1000) / 2000)
        kept += page.length
      }
      read += page.length
      if (page.length < WARM_PAGE_ROWS) break
      after = page.at(-1)!.fingerprintSha256
    }
    return kept
  }

  /** The cached row of a fingerprint (tests, the re-check). */
  peek(fingerprint: string): PresentedCertificate | undefined {
    return this.cache.get(fingerprint)?.certificate
  }

  /**
   * The identity at once, without a promise, when the socket's row is cached and nothing needs writing
   * (its first use is marked already): the keep-alive heartbeat's case. Undefined when authenticate()
   * must read or write the database; a cached row that is refused throws here as it would there.
   */
  knownIdentity(socket: TLSSocket, now: Date, markFirstUse: boolean): AgentIdentity | undefined {
    const fingerprint = socket.authorized ? peerFingerprint(socket) : null
    const certificate = fingerprint ? this.cached(fingerprint) : undefined
    if (!certificate || (markFirstUse && certificate.firstUsedAt === null)) return undefined
    return this.admit(certificate, now)
  }

  /**
   * Authenticate the socket's client certificate at `now`. With markFirstUse, the first
   * request presenting a certificate records it and revokes the node's older ones.
   */
  async authenticate(socket: TLSSocket, now: Date, markFirstUse: boolean): Promise<AgentIdentity> {
    const fingerprint = socket.authorized ? peerFingerprint(socket) : null
    if (!fingerprint) return this.refuse('no_certificate')
    let certificate = this.cached(fingerprint)
    if (!certificate) {
      const evictions = this.evictions
      certificate = await this.rows.get(fingerprint)
      if (!certificate) return this.refuse('unknown')
      if (this.evictions === evictions) this.remember(certificate)
    }
    const identity = this.admit(certificate, now)
    if (markFirstUse && certificate.firstUsedAt === null) {
      const { firstUse, revoked } = await markFirstUseAndRevokeOlder(
        this.options.pool,
        certificate.id,
        certificate.nodeId,
        now,
      )
      certificate = { ...certificate, firstUsedAt: now }
      identity.certificate = certificate
      this.remember(certificate)
      if (firstUse && revoked > 0) {
        this.evictNode(certificate.nodeId, fingerprint)
        this.options.onRevoked?.(revoked)
        await appendEvent(this.options.pool, {
          kind: 'certificates_revoked',
          nodeId: certificate.nodeId,
          at: now,
          data: { reason: 'superseded', count: revoked, by_serial: certificate.serial },
        })
      }
    }
    return identity
  }

  /** The identity a row gives at `now`, or the refusal of a revoked, expired or disallowed one. */
  private admit(certificate: PresentedCertificate, now: Date): AgentIdentity {
    if (certificate.revokedAt !== null) return this.refuse('revoked')
    if (now.getTime() >= certificate.notAfter.getTime()) return this.refuse('expired')
    if (!AUTHENTICATED_STATUSES.has(certificate.nodeStatus)) return this.refuse('node_status')
    return { nodeId: certificate.nodeId, nodeStatus: certificate.nodeStatus, certificate }
  }

  /** Forget every cached row of a node (its certificates or status changed here). */
  evictNode(nodeId: string, keepFingerprint?: string): void {
    this.evictions++
    for (const [fingerprint, entry] of this.cache) {
      if (entry.certificate.nodeId === nodeId && fingerprint !== keepFingerprint) this.cache.delete(fingerprint)
    }
  }

  private cached(fingerprint: string): PresentedCertificate | undefined {
    const entry = this.cache.get(fingerprint)
    if (!entry) return undefined
    if (entry.expiresMs <= Date.now()) {
      this.cache.delete(fingerprint)
      return undefined
    }
    return entry.certificate
  }

  /** Cache a row for the cache time (times `share`, below 1 to spread the expiry of rows cached together). */
  private remember(certificate: PresentedCertificate, share = 1): void {
    const ttl = this.cacheMs * share
    if (ttl <= 0) return
    if (this.cache.size > 100_000) this.cache.clear()
    this.cache.set(certificate.fingerprintSha256, { certificate, expiresMs: Date.now() + ttl })
  }

  private refuse(reason: string): never {
    this.options.onRefusal?.(reason)
    // One message for every reason: the caller learns only that it must re-enroll.
    throw new FleetkitError('CERTIFICATE_REFUSED', 'the client certificate is not accepted', { data: { reason } })
  }
}
