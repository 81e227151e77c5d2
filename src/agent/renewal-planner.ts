// The run loop's renewal: when the agent renews (a jittered point of its certificate's life, pulled
// forward once per certificate when the gateway issues from a new CA), and the renewal step itself,
// whose shed answers (429/503) are retried no sooner than the gateway asks.
import { toFleetkitError } from '../checks/fleetkit-error.js'
import type { Clock } from '../config/clock.js'
import { type Rng, unitInterval } from '../config/rng.js'
import type { Logger } from '../log/logger.js'
import { jitteredRetryMs } from './backoff.js'
import type { AgentConfig } from './config.js'
import { renewCertificate } from './renew.js'
import { nextRenewalCheckAt, plannedRenewalAt, renewalDecision } from './renewal-schedule.js'
import type { AgentSession } from './session.js'
import { adoptRestagedIdentity } from './trust-refresh.js'

/** Codes after which retrying in this process cannot help: exit, systemd restarts from the staged files. */
export const FATAL = new Set([
  'AGENT_CERTIFICATE_REJECTED',
  'CERTIFICATE_EXPIRED',
  'IDENTITY_MISSING',
  'IDENTITY_INVALID',
  'AGENT_CONFIG_INVALID',
  'AGENT_KEY_PERMISSIONS',
])

export class RenewalPlanner {
  /** When this certificate is renewed. */
  planned: Date
  /** The certificate `planned` was drawn for: another one (restaged, recovered) gets a new draw. */
  private plannedSerial: string
  /** The certificate a CA rotation already pulled the renewal forward for. */
  private rotationPlannedFor: string | undefined
  /** The next time the loop looks at renewal at all. */
  nextCheck: number

  constructor(
    private readonly session: AgentSession,
    private readonly config: AgentConfig,
    private readonly log: Logger,
    private readonly clock: Clock,
    private readonly rng: Rng,
  ) {
    this.planned = plannedRenewalAt(session.identity.window, rng)
    this.plannedSerial = session.identity.serial
    this.nextCheck = clock.now().getTime()
  }

  /** A new certificate (recovered): its own renewal point. */
  replan(): void {
    this.planned = plannedRenewalAt(this.session.identity.window, this.rng)
    this.plannedSerial = this.session.identity.serial
  }

  /** Adopts a restaged identity, renews when due, and sets the next check. Throws only what is fatal. */
  async step(now: Date): Promise<void> {
    const { session, clock, log } = this
    await adoptRestagedIdentity(session, this.config, log)
    if (this.plannedSerial !== session.identity.serial) this.replan()
    // Judge "due" on the gateway's clock: it is the one that says renewal_not_due.
    const gatewayNow = new Date(now.getTime() + (session.skewMs ?? 0))
    const decision = renewalDecision(gatewayNow, session.identity.window, this.planned)
    /** After a shed renewal: the earliest next attempt (Retry-After plus jitter). */
    let notBefore = 0
    if (decision !== 'wait') {
      try {
        const outcome = await renewCertificate(session, log)
        if (outcome.outcome === 'renewed') {
          this.replan()
          log('info', 'renewal_planned', { serial: this.plannedSerial, renew_at: this.planned.toISOString() })
        }
      } catch (error) {
        const e = toFleetkitError(error)
        if (FATAL.has(e.code) || e.data?.staged === true) throw e
        // Shed (429/503): not before Retry-After plus jitter, even when urgent.
        const retryAfter = e.data?.retry_after as string | string[] | undefined
        notBefore =
          retryAfter === undefined
            ? 0
            : clock.now().getTime() + jitteredRetryMs(retryAfter, 1, clock.now().getTime(), this.rng)
        log('warn', 'renewal_failed', {
          code: e.code,
          message: e.message,
          decision,
          ...(notBefore > 0 ? { retry_in_ms: notBefore - clock.now().getTime() } : {}),
        })
      }
    }
    this.nextCheck = Math.max(
      nextRenewalCheckAt(clock.now(), session.identity.window, this.config.renewCheckSeconds * 1000).getTime(),
      notBefore,
    )
  }

  /**
   * The gateway issues from a new CA (a rotation began): renew at a random point of the next check
   * interval, once per certificate, so a fleet told in the same second does not renew in one burst.
   */
  planRotationRenewal(): void {
    const { session } = this
    if (this.rotationPlannedFor === session.identity.serial) return
    this.rotationPlannedFor = session.identity.serial
    const at = this.clock.now().getTime() + Math.floor(unitInterval(this.rng) * this.config.renewCheckSeconds * 1000)
    if (at < this.planned.getTime()) this.planned = new Date(at)
    this.nextCheck = Math.min(this.nextCheck, at)
    this.log('info', 'rotation_renewal_planned', {
      serial: session.identity.serial,
      renew_at: new Date(at).toISOString(),
    })
  }
}
