// Failure codes of fleetkit-agent, the host side: its configuration, enrollment,
// identity files, talking to the gateway, renewal and the host checks it reports.
import type { FailureCodeSpec } from '../failure-code-spec.js'

export const AGENT_CODES = {
  AGENT_CONFIG_INVALID: {
    summary: 'The agent configuration (agent.env, environment or flags) is missing a value or has a bad one.',
    person: false,
    exitCode: 78,
  },
  ENROLLMENT_SECRET_MISSING: {
    summary: 'The agent has no identity yet and its enrollment secret file is missing or empty.',
    person: false,
  },
  AGENT_ENROLL_FAILED: {
    summary: 'The gateway did not enroll the agent (refused secret, invalid CSR, or an error).',
    person: false,
  },
  IDENTITY_MISSING: { summary: "The agent's key or certificate is not staged: it has not enrolled.", person: false },
  AGENT_KEY_PERMISSIONS: {
    summary:
      "The agent's private key file is readable or writable by group or others, or is a link; the agent refuses to use it.",
    person: true,
    exitCode: 78,
  },
  IDENTITY_INVALID: {
    summary: "The agent's staged key, certificate or CA bundle cannot be read or does not match.",
    person: false,
  },
  CERTIFICATE_EXPIRING: {
    summary: "The agent's certificate is past its renewal point and has not been renewed.",
    person: false,
  },
  CERTIFICATE_EXPIRED: { summary: "The agent's certificate has expired; it must enroll again.", person: false },
  AGENT_CERTIFICATE_REJECTED: {
    summary: "The gateway answered 401: it does not accept the agent's certificate (revoked or unknown).",
    person: false,
  },
  AGENT_RENEWAL_FAILED: {
    summary: 'Renewing the certificate failed, or the renewed certificate failed its health check.',
    person: false,
  },
  GATEWAY_RESPONSE_INVALID: {
    summary:
      "The gateway answered with a body that does not match the agent's wire contract (versions differ, or something in between rewrote it).",
    person: false,
  },
  GATEWAY_UNREACHABLE: {
    summary: 'The agent cannot reach the gateway or complete a TLS handshake with it.',
    person: false,
    exitCode: 69,
  },
  GATEWAY_CA_ROTATED: {
    summary:
      "The gateway presents a certificate from a CA the agent does not trust yet, or refuses the agent's certificate from the CA it replaced: the fleet's CA was rotated while the agent was away.",
    person: false,
    exitCode: 69,
  },
  CLOCK_SKEW: { summary: "The host clock differs from the gateway's by more than TLS tolerates.", person: true },
  BR_NETFILTER_OFF: {
    summary: 'br_netfilter is not active or a net.bridge.bridge-nf-call-* sysctl is not 1.',
    person: false,
  },
  DATA_VOLUME_NOT_MOUNTED: {
    summary: 'The data volume is not mounted at its mount point, or is not XFS.',
    person: false,
  },
  FIREWALL_TABLE_MISSING: { summary: 'The inet fleetkit nftables table is not loaded.', person: false },
  FIREWALL_RULES_DRIFTED: {
    summary: 'The loaded inet fleetkit nftables table differs from the one the firewall role last converged.',
    person: false,
  },
  FIREWALL_SNAPSHOT_STALE: {
    summary:
      'The snapshot of the loaded inet fleetkit table that the unprivileged agent reads is missing or older than 2 minutes.',
    person: false,
  },
  DISK_FREE_LOW: {
    summary: 'The data volume has less free space than the agent is configured to require.',
    person: true,
  },
  AGENT_UNIT_INACTIVE: { summary: 'The fleetkit-agent systemd unit is not enabled and active.', person: false },
} as const satisfies Record<string, FailureCodeSpec>
