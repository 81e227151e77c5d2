// Failure codes of `fleetkit sync` and `fleetkit drift` (src/sync/): the run's outcome, the lock,
// plans and the per-node codes the ledger records (docs/runbooks.md "Sync and drift").
import type { FailureCodeSpec } from '../failure-code-spec.js'

export const SYNC_CODES = {
  SYNC_CANARY_FAILED: {
    summary:
      'The canary failed (or no node of its pool was reachable): no other node was touched; they are not_attempted.',
    person: true,
    exitCode: 20,
  },
  SYNC_PARTIAL_FAILURE: {
    summary: 'The canary converged but at least one other node failed or rolled back; the rest converged.',
    person: true,
    exitCode: 21,
  },
  SYNC_NODES_UNREACHABLE: {
    summary: 'Every node that was reached converged, but at least one could not be reached over SSH.',
    person: false,
    exitCode: 22,
  },
  SYNC_IN_PROGRESS: {
    summary: "Another fleetkit sync holds the fleet's sync lock; one sync runs at a time.",
    person: false,
    exitCode: 23,
  },
  SYNC_PLAN_STALE: {
    summary:
      'The plan changed since it was reviewed (--plan-hash): definition, roles, revision or target nodes differ.',
    person: true,
    exitCode: 24,
  },
  SYNC_REF_INVALID: {
    summary:
      '--ref is not a full 40-character commit SHA of the fleet repository (a branch or a short SHA is refused).',
    person: true,
    exitCode: 2,
  },
  SYNC_RUN_UNKNOWN: {
    summary: '--resume names a run that does not exist, is finished, is not a sync, or is still held by a live sync.',
    person: true,
    exitCode: 2,
  },
  SYNC_RESUME_SCOPE_CHANGED: {
    summary:
      '--resume was given a --limit or --tags other than the run was started with; a resume finishes the run as it began.',
    person: true,
    exitCode: 2,
  },
  SYNC_TARGET_UNKNOWN: {
    summary: '--limit names a node that is neither declared nor in the state.',
    person: true,
    exitCode: 2,
  },
  SYNC_NO_TARGETS: {
    summary: 'Nothing to sync: every selected node is parked, retired, lost or disabled.',
    person: true,
    exitCode: 2,
  },
  SYNC_NODE_FAILED: {
    summary:
      'A task failed on the node without a fleetkit failure code of its own; the ledger has the task and its message.',
    person: true,
  },
  SSH_HOST_KEY_MISMATCH: {
    summary:
      'The host answered with a different SSH host key from the one pinned in the definition or the state; fleetkit did not connect.',
    person: true,
  },
  SSH_HOST_KEY_NOT_PINNED: {
    summary:
      'No SSH host key is pinned for the node (no hostKey in fleet.yaml, none from a seed in the state); fleetkit did not connect.',
    person: true,
  },
  AGENT_NOT_HEARTBEATING: {
    summary:
      'The roles converged the node but the agent sync installed did not enroll or heartbeat within the wait; the node is not reported converged.',
    person: true,
  },
  DRIFT_DETECTED: {
    summary:
      'fleetkit drift found nodes whose hosts differ from what the definition and the roles would converge them to.',
    person: true,
    exitCode: 1,
  },
} as const satisfies Record<string, FailureCodeSpec>
