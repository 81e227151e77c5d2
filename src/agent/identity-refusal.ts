// What `fleetkit-agent run` stops on for good: the gateway refused the node's identity (its certificate
// revoked or unknown, a recovery refused or too late), which no restart can change, only a new secret.
import type { FleetkitError } from '../checks/fleetkit-error.js'

/**
 * The exit status of such a stop. fleetkit-agent.service names it in RestartPreventExitStatus, so
 * systemd leaves the agent stopped instead of restarting it every few seconds on a refused identity
 * (a decommissioned host would otherwise knock forever). EX_NOPERM of sysexits.h.
 */
export const IDENTITY_REFUSED_EXIT = 77

const IDENTITY_REFUSALS = new Set([
  'AGENT_CERTIFICATE_REJECTED',
  'RECOVERY_REFUSED',
  'RECOVERY_WINDOW_EXPIRED',
  'CERTIFICATE_EXPIRED',
])

export function isIdentityRefusal(error: FleetkitError): boolean {
  return IDENTITY_REFUSALS.has(error.code)
}

/** The one log line of such a stop: why, and what brings the node back. */
export function identityRefusalLog(nodeId: string | undefined, error: FleetkitError): Record<string, unknown> {
  return {
    code: error.code,
    reason: error.message,
    exit_status: IDENTITY_REFUSED_EXIT,
    next:
      `the agent stays stopped until it enrolls again: if node ${nodeId ?? 'NODE'} should stay in the fleet, ` +
      `fleetkit runbook ${error.code} on the operator machine says how`,
  }
}
