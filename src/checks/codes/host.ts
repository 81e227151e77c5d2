// Failure codes of the Ansible roles that converge a host (ansible/roles/): each role's fail
// message starts with one of these, so a sync report names the code and its runbook.
import type { FailureCodeSpec } from '../failure-code-spec.js'

export const HOST_CODES = {
  HOST_RELEASE_UNSUPPORTED: {
    summary:
      'The host runs an operating system release policy/host-policy.yaml does not accept (compared by major version).',
    person: true,
  },
  HOST_ARCH_UNSUPPORTED: { summary: 'The host has a CPU architecture fleetkit ships no agent for.', person: true },
  HOST_VIRT_REFUSED: {
    summary: 'The host is a container or WSL its node does not declare (fleet.yaml container: true).',
    person: true,
  },
  HOST_CONTAINER_NOT_CONTAINER: {
    summary: 'The node declares container: true but the host is a VM or bare metal with a kernel of its own.',
    person: true,
  },
  HOST_SIZE_BELOW_MINIMUM: {
    summary: "The host has fewer CPUs, less memory or a smaller root disk than the host policy's minimum.",
    person: true,
  },
  BR_NETFILTER_MISSING: {
    summary: 'The kernel can neither load br_netfilter nor has it built in (no net.bridge sysctls).',
    person: true,
  },
  DATA_VOLUME_DEVICE_MISSING: {
    summary: "The node's declared data volume device is not a block device on the host.",
    person: true,
  },
  DATA_VOLUME_FOREIGN_FS: {
    summary: 'The declared data volume holds another filesystem or a partition table; fleetkit never reformats it.',
    person: true,
  },
  DOCKER_DAEMON_JSON_INVALID: {
    summary: '/etc/docker/daemon.json is not a JSON object, so its address pools cannot be managed.',
    person: true,
  },
  DOCKER_FIXED_CIDR_REFUSED: {
    summary: "/etc/docker/daemon.json sets fixed-cidr, which fights the pool's docker network plan.",
    person: true,
  },
  AGENT_DOWNGRADE_REFUSED: {
    summary: 'The host runs a newer fleetkit-agent than the pinned version and the run did not allow a downgrade.',
    person: true,
  },
  AGENT_ROLE_INPUT_INVALID: {
    summary: "The agent role's inputs (node id, gateway URLs, data mount) are missing or would break agent.env.",
    person: false,
  },
  AGENT_ACCOUNT_FOREIGN: {
    summary:
      'An account or group named fleetkit-agent exists on the host that fleetkit did not create; the agent role never takes it over.',
    person: true,
  },
  SSHD_ROOT_LOGIN_IN_USE: {
    summary:
      'The sshd role would turn off root login while the run itself logs in as root, which would lock it out; nothing changed.',
    person: true,
  },
  SSHD_CONFIG_INVALID: {
    summary: "sshd -t refuses the host's whole sshd configuration with fleetkit's drop-in in place; nothing changed.",
    person: true,
  },
  SSHD_SETTING_OVERRIDDEN: {
    summary:
      "A setting of fleetkit's sshd drop-in is decided outside sshd_config.d (the main sshd_config before its Include), so no drop-in can keep it.",
    person: true,
  },
  TAILSCALE_AUTH_KEY_MISSING: {
    summary: 'Tailscale is asked for but the auth key environment variable is empty on the machine running Ansible.',
    person: true,
  },
} as const satisfies Record<string, FailureCodeSpec>
