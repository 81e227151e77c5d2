// Token buckets for load shedding: one per source address and one global, refilled
// continuously; over the limit the caller answers 429 with Retry-After, never a 5xx.

export interface BucketLimit {
  /** Tokens a full bucket holds: the burst allowed at once. */
  burst: number
  /** Tokens added per second. */
  perSecond: number
}

export class TokenBucket {
  private tokens: number
  private updatedMs: number

  constructor(
    private readonly limit: BucketLimit,
    nowMs: number,
  ) {
    this.tokens = limit.burst
    this.updatedMs = nowMs
  }

  private refill(nowMs: number): void {
    const elapsed = Math.max(0, nowMs - this.updatedMs) / 1000
    this.tokens = Math.min(this.limit.burst, this.tokens + elapsed * this.limit.perSecond)
    this.updatedMs = Math.max(this.updatedMs, nowMs)
  }

  /** Take one token: 0 when taken, else the seconds until one is available (nothing taken). */
  take(nowMs: number): number {
    this.refill(nowMs)
    if (this.tokens >= 1) {
      this.tokens -= 1
      return 0
    }
    return (1 - this.tokens) / this.limit.perSecond
  }

  /** True when the bucket would be full at nowMs (it carries no state worth keeping). */
  isFull(nowMs: number): boolean {
    this.refill(nowMs)
    return this.tokens >= this.limit.burst
  }
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number; scope: 'source' | 'global' }

export interface RateLimiterOptions {
  perSource: BucketLimit
  global: BucketLimit
  /** Source buckets kept at most; full (idle) ones are dropped first. */
  maxSources?: number
}

export class RateLimiter {
  private readonly sources = new Map<string, TokenBucket>()
  private readonly global: TokenBucket
  private readonly maxSources: number

  constructor(
    private readonly options: RateLimiterOptions,
    private readonly nowMs: () => number,
  ) {
    this.global = new TokenBucket(options.global, nowMs())
    this.maxSources = options.maxSources ?? 10_000
  }

  take(source: string): RateDecision {
    const now = this.nowMs()
    let bucket = this.sources.get(source)
    if (!bucket) {
      this.evict(now)
      bucket = new TokenBucket(this.options.perSource, now)
      this.sources.set(source, bucket)
    }
    const sourceWait = bucket.take(now)
    if (sourceWait > 0)
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(sourceWait)), scope: 'source' }
    const globalWait = this.global.take(now)
    if (globalWait > 0)
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(globalWait)), scope: 'global' }
    return { allowed: true }
  }

  get trackedSources(): number {
    return this.sources.size
  }

  private evict(now: number): void {
    if (this.sources.size < this.maxSources) return
    for (const [key, bucket] of this.sources) if (bucket.isFull(now)) this.sources.delete(key)
    // Still full of busy sources: drop the oldest entries rather than grow without bound.
    while (this.sources.size >= this.maxSources) {
      const oldest = this.sources.keys().next()
      if (oldest.done) break
      this.sources.delete(oldest.value)
    }
  }
}
