// Failure codes of the node lifecycle: admit, drain, decommission, park, the sweep's
// configuration, allocations, and the gateway's operator API.
import type { FailureCodeSpec } from '../failure-code-spec.js'

export const LIFECYCLE_CODES = {
  NODE_STATE_CONFLICT: {
    summary:
      'A lifecycle command does not apply to the node in its current status (admit a retired node, drain a parked one ...).',
    person: false,
  },
  NODE_SILENT: {
    summary: 'node admit refused: the node has not heartbeated within the last 60 s (database clock).',
    person: false,
  },
  NODE_CHECKS_FAILING: { summary: "node admit refused: the node's latest host checks failed.", person: false },
  NODE_CHECKS_WARNING: {
    summary:
      "node admit refused: the node's latest host checks warned, and a person did not accept each warning by name (--accept-warn ID).",
    person: true,
  },
  NODE_NOT_CONVERGED: {
    summary:
      'fleet ready: the node has no fleetkit sync that converged it with the current definition (never synced, last attempt failed, or another definition).',
    person: false,
  },
  AGENT_VERSION_NOT_ACCEPTED: {
    summary: "fleet ready: the node's agent reports another version than the definition's release.version (or none).",
    person: false,
  },
  FLEET_NOT_READY: {
    summary:
      'fleet ready: a node that should serve is not admitted, healthy, converged for the current definition, undrifted or on the accepted agent version.',
    person: false,
    exitCode: 3,
  },
  NODE_CAPACITY_UNKNOWN: {
    summary:
      'node admit refused: no capacity is recorded for the node (neither provisioning nor the definition gave one).',
    person: true,
  },
  NODE_HAS_ALLOCATIONS: {
    summary:
      'node decommission refused: the node still holds active allocations (or live leases) that their owners must release.',
    person: true,
  },
  NODE_WAIT_TIMEOUT: {
    summary: 'node drain --wait or node decommission --wait gave up: jobs or allocations were still live.',
    person: false,
  },
  NODE_NOT_SCHEDULABLE: {
    summary: 'A reservation targeted a node that is not admitted (schedulable) or not active.',
    person: false,
  },
  ALLOCATION_OVER_CAPACITY: {
    summary: "A reservation would exceed the node's capacity in at least one dimension.",
    person: false,
  },
  ALLOCATION_UNKNOWN: { summary: 'No active allocation of that id (unknown, or already released).', person: false },
  LIFECYCLE_CONFIG_INVALID: {
    summary:
      'A sweep threshold variable (FLEETKIT_NODE_UNHEALTHY_AFTER, FLEETKIT_NODE_LOST_AFTER) has a value fleetkit cannot use.',
    person: false,
    exitCode: 2,
  },
  SWEEP_THRESHOLDS_DISAGREE: {
    summary:
      'fleetkit sweep refused: FLEETKIT_NODE_UNHEALTHY_AFTER or FLEETKIT_NODE_LOST_AFTER set here differs from the thresholds the gateways recorded; a person chooses which to judge with.',
    person: true,
    exitCode: 2,
  },
  OPERATOR_CERT_UNKNOWN: {
    summary: 'No live operator certificate of that name (and serial): never issued, expired or already revoked.',
    person: false,
  },
  OPERATOR_REFUSED: {
    summary:
      'An operator API request came neither from loopback addressed to localhost nor with a live operator client certificate.',
    person: false,
  },
} as const satisfies Record<string, FailureCodeSpec>
