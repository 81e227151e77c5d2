// Which gateway an agent talks to when there are several (a gateway and its replicas on one
// database): each agent starts at one chosen by its node ID, so a fleet spreads over the gateways
// without a load balancer, stays there while it answers, and moves to the next when it fails. The
// first moves of a failure streak are quick (a jittered second or few: the next gateway is likely
// up); once every gateway failed in a row, the caller's backoff decides.
import { createHash } from 'node:crypto'

import { type Rng, unitInterval } from '../config/rng.js'

export class GatewayChoice {
  private index: number
  /** Gateways tried since the last success, the current one included. */
  private tried = 1

  constructor(
    readonly urls: readonly string[],
    nodeId: string,
  ) {
    if (urls.length === 0) throw new RangeError('GatewayChoice needs at least one URL')
    this.index = startIndex(nodeId, urls.length)
  }

  get current(): string {
    return this.urls[this.index]!
  }

  /**
   * The current gateway failed: move to the next. True while that one was not tried yet in this
   * streak (retry soon), false once every gateway failed since the last success (back off).
   */
  failed(): { from: string; to: string; untried: boolean } | undefined {
    if (this.urls.length < 2) return undefined
    const from = this.current
    this.index = (this.index + 1) % this.urls.length
    const untried = this.tried < this.urls.length
    if (untried) this.tried++
    return { from, to: this.current, untried }
  }

  succeeded(): void {
    this.tried = 1
  }
}

/** What a call to the current gateway ended with: an HTTP answer, or a transport failure's fleetkit code. */
export type CallOutcome = { status: number } | { failure: string }

/** Answers after which another gateway may do better: a proxy without a gateway behind it, or one that cannot serve now. */
const FAILOVER_STATUSES = new Set([502, 503, 504])

/**
 * Why the agent moves to the next gateway after this outcome, or undefined to stay. Only what another
 * gateway can cure moves it: no connection (GATEWAY_UNREACHABLE: refused, reset, timed out, or a TLS
 * handshake that failed, since each gateway gets the PKI directory by a copy and one may still present
 * an old certificate) or a 502, 503 or 504. Any 4xx is an answer (401, 403, 409 say the same on every
 * gateway: they share one database), as is a 500 (a bug the next gateway runs too) and a 429 (shed:
 * the agent waits what it is told); CLOCK_SKEW is the agent's own clock and follows it anywhere.
 */
export function failoverReason(outcome: CallOutcome): string | undefined {
  if ('failure' in outcome) return outcome.failure === 'GATEWAY_UNREACHABLE' ? outcome.failure : undefined
  return FAILOVER_STATUSES.has(outcome.status) ? `http_${outcome.status}` : undefined
}

/** The same node ID always starts at the same gateway; node IDs spread evenly over them. */
export function startIndex(nodeId: string, count: number): number {
  return createHash('sha256').update(nodeId, 'utf8').digest().readUInt32BE(0) % count
}

/** The URLs in the order this node tries them once each (enrollment, recovery): its start gateway first. */
export function urlsFrom(urls: readonly string[], nodeId: string): string[] {
  const start = urls.length === 0 ? 0 : startIndex(nodeId, urls.length)
  return [...urls.slice(start), ...urls.slice(0, start)]
}

/** The wait before trying the next gateway of a streak: jittered, so a dead gateway's agents do not arrive at once. */
export function failoverDelayMs(rng: Rng, heartbeatMs: number): number {
  const upper = Math.max(500, Math.min(5000, heartbeatMs))
  return Math.round(250 + unitInterval(rng) * (upper - 250))
}
