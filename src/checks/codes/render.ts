// Failure codes of rendering: seeds (user-data), node tokens, the Ansible inventory
// and `fleetkit validate --ansible`. Runbook section: "Seeds and inventory".
import type { FailureCodeSpec } from '../failure-code-spec.js'

export const RENDER_CODES = {
  SEED_VALUE_INVALID: {
    summary:
      'A value that would go into a seed or inventory fails its grammar (URL, version, key, PEM, id); it is refused, never escaped.',
    person: true,
  },
  SEED_TOO_LARGE: { summary: 'The seed is over the 32 KiB user-data budget even after gzip.', person: true },
  SEED_TTL_INVALID: {
    summary: 'The --ttl of an enrollment secret is not a duration between 1 minute and 24 hours.',
    person: false,
    exitCode: 2,
  },
  SEED_STDOUT_TTY: {
    summary: 'A seed holding a secret would be printed to a terminal; it is written only to a file or a pipe.',
    person: false,
    exitCode: 2,
  },
  NODE_NOT_PROVISIONING: {
    summary:
      'A new enrollment secret was asked for a node that is not provisioning (enrolled, lost, parked, failed or retired); nothing changed. --reissue does it on purpose.',
    person: false,
  },
  SEED_KIND_PENDING: {
    summary:
      'A seed of one kind was asked for a node with a pending seed of the other kind (an unused agent secret, or a pinned worker host key never enrolled); nothing changed. --yes replaces it on purpose.',
    person: false,
  },
  NODE_SECRET_PENDING: {
    summary:
      'A new enrollment secret was asked for a provisioning node whose secret is still unused and unexpired (a seed already out, or one given out while node provision ran); nothing changed. --reissue does it on purpose (seed, node token).',
    person: false,
  },
  NODE_CHANGED_CONCURRENTLY: {
    summary:
      'Another seed or node token run changed the node (its secret, host key or status) between this run reading it and storing its own; this run stored and printed nothing, so the other run holds the valid secret or key.',
    person: false,
  },
  WORKER_SSH_UNDECLARED: {
    summary:
      'A worker seed was asked for a node that declares no ssh (host and user) in fleet.yaml: a worker is reached over SSH as that account.',
    person: true,
  },
  HOST_KEY_PINNED: {
    summary:
      'A seed or node provision would replace the SSH host key pinned in fleet.yaml or the state; nothing changed. --rekey does it on purpose.',
    person: false,
  },
  HOST_KEY_DISAGREES: {
    summary:
      'The SSH host key pinned in the state differs from the hostKey declared in fleet.yaml; the inventory is not written until fleet.yaml says which is true.',
    person: true,
  },
  NODE_ADDRESS_DISAGREES: {
    summary:
      "A node's ssh.host in fleet.yaml differs from the address of the server fleetkit provisioned for it (the state's); nothing is written until fleet.yaml drops ssh.host or names that address.",
    person: true,
  },
  OUTPUT_WRITE_FAILED: {
    summary:
      'A seed, token, inventory or --json result could not be written (missing directory, full disk, refused path, closed pipe); data.committed says whether the state had already changed (then the unseen secret is replaced with --reissue).',
    person: false,
  },
  ANSIBLE_MISSING: { summary: 'ansible-playbook or ansible-inventory is not installed.', person: false },
  ANSIBLE_INVENTORY_INVALID: {
    summary: 'ansible-inventory cannot read the inventory fleetkit rendered.',
    person: true,
  },
  ANSIBLE_PLAYBOOK_INVALID: {
    summary: 'A playbook in ansible/playbooks/ fails ansible-playbook --syntax-check.',
    person: true,
  },
} as const satisfies Record<string, FailureCodeSpec>
