// Failure codes of provisioning, replacing and deleting provider servers and volumes (spec 06;
// src/lifecycle/provision/node-provision.ts, provision-volume.ts, node-replace.ts, provider-delete.ts,
// volume-release.ts; docs/runbooks.md "Provisioning").
import type { FailureCodeSpec } from '../failure-code-spec.js'

export const PROVISION_CODES = {
  NODE_UNDECLARED: {
    summary: 'node provision was given a node that fleet.yaml does not declare; the message prints the YAML to add.',
    person: true,
  },
  PROVISION_IN_PROGRESS: {
    summary: 'node provision found a provisioning run of the node already under way: continue it with --resume.',
    person: false,
  },
  NODE_BUSY: {
    summary:
      'Another node provision, --resume, node replace or node decommission run is acting on the node right now; this one changed nothing.',
    person: false,
    exitCode: 75,
  },
  PROVISION_NOT_STARTED: {
    summary: 'node provision --resume was given a node that no provisioning run started.',
    person: false,
  },
  PROVISION_INPUT_INVALID: {
    summary:
      'node provision refused its inputs before anything was created: an unknown server type, location, image or SSH key, or an image of another architecture.',
    person: true,
  },
  PROVISION_WAIT_TIMEOUT: {
    summary: 'node provision stopped waiting for the enrollment (--wait); the run stays open for --resume.',
    person: false,
  },
  ENROLLMENT_EXPIRED: {
    summary: "A provisioned node's enrollment secret expired before its agent enrolled: the node is failed.",
    person: true,
  },
  NODE_NOT_PROVIDER_MANAGED: {
    summary: 'node replace was given a node fleetkit did not provision (no provider server recorded).',
    person: true,
  },
  PROVIDER_DELETE_FAILED: {
    summary:
      'node decommission retired the node but could not delete its provider server; the delete is recorded as pending and the same command retries it.',
    person: false,
  },
  VOLUME_SIZE_INVALID: {
    summary:
      'node provision --volume was given a size that is not a whole number of GB from 10 to 10240 (Hetzner Cloud bounds); nothing was written.',
    person: true,
  },
  PROVIDER_VOLUME_ATTACH_FAILED: {
    summary:
      "node provision could not attach the node's volume to its server; the volume is recorded and --resume retries the attach.",
    person: false,
  },
  PROVIDER_VOLUME_DETACH_FAILED: {
    summary:
      'node decommission retired the node but could not detach its volume; the same command retries it (and the server delete after it).',
    person: false,
  },
  PROVIDER_VOLUME_DELETE_FAILED: {
    summary:
      'node decommission --delete-volume detached the volume but could not delete it; the same command with --delete-volume retries the delete.',
    person: false,
  },
} as const satisfies Record<string, FailureCodeSpec>
