// Keeps the agent authentication cache true across gateways: certificate rows are cached for
// long, a revocation or status change announced on PostgreSQL's fleetkit_auth channel drops the
// node's rows at once, and a periodic re-read of every cached row is the safety net. Once listening,
// it reads every live certificate into the cache, so a reconnect storm after a restart reads no row per agent.
import type { StatePool } from '../../store/transaction.js'

import type { Logger } from '../../log/logger.js'
import {
  type AuthListener,
  listenForAuthChanges,
  readCertificateAuthStates,
} from '../../store/pki/auth-notifications.js'
import type { AgentAuthenticator } from './agent-auth.js'

export interface AuthCacheOptions {
  auth: AgentAuthenticator
  /** The raw pool: the LISTEN connection is made from its settings, outside it. */
  rawPool: StatePool
  /** The guarded pool for the re-check reads. */
  pool: StatePool
  logger: Logger
  /** How long rows are cached while announcements are heard. */
  cacheMs: number
  /** How long while they are not (the LISTEN connection is down): revocation must stay prompt. */
  unheardCacheMs: number
  /** How often every cached row is read again. */
  recheckMs: number
  /** Wait before listening again after the connection failed. */
  relistenMs: number
}

export class AuthCacheKeeper {
  private listener: AuthListener | undefined
  private recheckTimer: NodeJS.Timeout | undefined
  private relistenTimer: NodeJS.Timeout | undefined
  private stopped = false

  constructor(private readonly options: AuthCacheOptions) {
    // Until LISTEN is confirmed nothing announced can be heard.
    options.auth.setCacheMs(Math.min(options.cacheMs, options.unheardCacheMs))
  }

  async start(): Promise<void> {
    await this.listen()
    this.recheckTimer = setInterval(
      () =>
        void this.recheck().catch((error: unknown) => {
          this.options.logger('warn', 'auth_cache_recheck_failed', { error: (error as Error).message })
        }),
      this.options.recheckMs,
    )
    this.recheckTimer.unref()
  }

  /** Read every cached row again and drop those that changed (tests call it; the timer does too). */
  async recheck(): Promise<number> {
    const { auth } = this.options
    // The rows as cached before the read: one dropped by an announcement or read again while the
    // read was out is already fresh, not a change nobody announced.
    const before = new Map(auth.cachedFingerprints().map((fingerprint) => [fingerprint, auth.peek(fingerprint)]))
    const states = new Map(
      (await readCertificateAuthStates(this.options.pool, [...before.keys()])).map((s) => [s.fingerprintSha256, s]),
    )
    let dropped = 0
    for (const [fingerprint, cached] of before) {
      if (auth.peek(fingerprint) !== cached) continue
      const now = states.get(fingerprint)
      const same =
        cached &&
        now &&
        (cached.revokedAt?.getTime() ?? null) === (now.revokedAt?.getTime() ?? null) &&
        cached.nodeStatus === now.nodeStatus &&
        cached.notAfter.getTime() === now.notAfter.getTime()
      if (!same) {
        auth.evictFingerprint(fingerprint)
        dropped++
      }
    }
    if (dropped > 0)
      this.options.logger('warn', 'auth_cache_stale_rows', {
        dropped,
        hint: 'a change was not announced on fleetkit_auth',
      })
    return dropped
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.recheckTimer) clearInterval(this.recheckTimer)
    if (this.relistenTimer) clearTimeout(this.relistenTimer)
    await this.listener?.close()
  }

  private async listen(): Promise<void> {
    const { auth, logger } = this.options
    try {
      this.listener = await listenForAuthChanges(
        this.options.rawPool,
        (nodeId) => auth.evictNode(nodeId),
        (error) => {
          // Announcements may have been missed: forget everything and cache briefly until heard again.
          auth.clear()
          auth.setCacheMs(Math.min(this.options.cacheMs, this.options.unheardCacheMs))
          this.listener = undefined
          logger('warn', 'auth_notifications_lost', { error: error.message, retry_in_ms: this.options.relistenMs })
          this.scheduleListen()
        },
      )
      // Rows cached before LISTEN took effect may have missed a change: start from nothing, then read
      // every live certificate at once (in the background: the listeners serve meanwhile, a miss reads its row).
      auth.clear()
      auth.setCacheMs(this.options.cacheMs)
      void this.warm()
    } catch (error) {
      logger('warn', 'auth_notifications_unavailable', {
        error: (error as Error).message,
        retry_in_ms: this.options.relistenMs,
      })
      this.scheduleListen()
    }
  }

  private async warm(): Promise<void> {
    const started = Date.now()
    try {
      const rows = await this.options.auth.warm()
      if (!this.stopped) this.options.logger('info', 'auth_cache_warmed', { rows, ms: Date.now() - started })
    } catch (error) {
      // Only speed is lost: each agent's first request reads its own row.
      if (!this.stopped) this.options.logger('warn', 'auth_cache_warm_failed', { error: (error as Error).message })
    }
  }

  private scheduleListen(): void {
    if (this.stopped) return
    this.relistenTimer = setTimeout(() => void this.listen(), this.options.relistenMs)
    this.relistenTimer.unref()
  }
}
