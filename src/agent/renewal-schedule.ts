// When to renew: at a random point between 2/3 and 85% of the certificate's lifetime,
// chosen once per certificate so 10,000 agents enrolled together spread out; at once past 90%.
import { type Rng, unitInterval } from '../config/rng.js'
import type { CertificateWindow } from './identity.js'

export const RENEW_EARLIEST_FRACTION = 2 / 3
export const RENEW_LATEST_FRACTION = 0.85
const RENEW_URGENT_FRACTION = 0.9

function pointAt(window: CertificateWindow, fraction: number): Date {
  const start = window.notBefore.getTime()
  return new Date(start + (window.notAfter.getTime() - start) * fraction)
}

/** The jittered renewal point of one certificate. */
export function plannedRenewalAt(window: CertificateWindow, rng: Rng): Date {
  const r = unitInterval(rng)
  return pointAt(window, RENEW_EARLIEST_FRACTION + r * (RENEW_LATEST_FRACTION - RENEW_EARLIEST_FRACTION))
}

export function urgentRenewalAt(window: CertificateWindow): Date {
  return pointAt(window, RENEW_URGENT_FRACTION)
}

export type RenewalDecision = 'wait' | 'due' | 'urgent'

/** `due` from the planned point, `urgent` past 90% (renew now, retry soon on failure). */
export function renewalDecision(now: Date, window: CertificateWindow, plannedAt: Date): RenewalDecision {
  if (now.getTime() >= urgentRenewalAt(window).getTime()) return 'urgent'
  return now.getTime() >= plannedAt.getTime() ? 'due' : 'wait'
}

/**
 * The next renewal check: every `checkIntervalMs`, but never later than the 90% point
 * (so "at once past 90%" holds with a long interval), and sooner after a failed urgent attempt.
 */
export function nextRenewalCheckAt(
  now: Date,
  window: CertificateWindow,
  checkIntervalMs: number,
  urgentRetryMs = 30_000,
): Date {
  const regular = now.getTime() + checkIntervalMs
  const urgent = urgentRenewalAt(window).getTime()
  if (now.getTime() >= urgent) return new Date(now.getTime() + Math.min(checkIntervalMs, urgentRetryMs))
  return new Date(Math.min(regular, urgent))
}

/** Fraction of the lifetime left at `now` (negative once expired). */
export function lifetimeLeft(now: Date, window: CertificateWindow): number {
  const total = window.notAfter.getTime() - window.notBefore.getTime()
  return total <= 0 ? 0 : (window.notAfter.getTime() - now.getTime()) / total
}
