// Failure codes of the firewall role and its dead-man switch (ansible/roles/firewall, deadman):
// a failed Ansible task whose message starts with the code (docs/runbooks.md "Firewall").
import type { FailureCodeSpec } from '../failure-code-spec.js'

export const FIREWALL_CODES = {
  FIREWALL_CONFIRM_TIMEOUT: {
    summary:
      'A firewall or sshd change was not confirmed over a new SSH connection in time; the host restored the previous state by itself.',
    person: true,
  },
  DEADMAN_TIMEOUT_TOO_SHORT: {
    summary:
      'A dead-man switch deadline is not more than twice the SSH connection timeout, so a confirmation could race the rollback.',
    person: true,
  },
  FIREWALL_INPUT_INVALID: {
    summary:
      'The firewall role was given inputs that admit SSH from nowhere (no operator CIDRs, no publicSsh, no tailnet).',
    person: true,
  },
} as const satisfies Record<string, FailureCodeSpec>
