// Failure codes of the Hetzner Cloud client and its local stub (src/provider/): the API's error
// codes mapped as spec 06 lists them (docs/runbooks.md "Provider").
import type { FailureCodeSpec } from '../failure-code-spec.js'

export const PROVIDER_CODES = {
  PROVIDER_TOKEN_MISSING: {
    summary: 'The environment variable that holds the Hetzner Cloud API token is unset or empty.',
    person: true,
  },
  PROVIDER_ENDPOINT_INSECURE: {
    summary: 'The Hetzner API URL is plain http to another machine (or not a URL): the token would travel in clear.',
    person: true,
  },
  PROVIDER_UNAUTHORIZED: {
    summary: 'Hetzner Cloud refused the API token (unknown, revoked, read-only or forbidden for this call).',
    person: true,
  },
  PROVIDER_QUOTA_EXCEEDED: {
    summary: 'The Hetzner Cloud project reached a resource limit (resource_limit_exceeded): nothing was created.',
    person: true,
  },
  PROVIDER_TYPE_UNAVAILABLE: {
    summary:
      'The server type cannot be placed in that location now (resource_unavailable): sold out or not offered there.',
    person: false,
  },
  PROVIDER_RATE_LIMITED: {
    summary: "The project's Hetzner Cloud request budget is spent and refills later than fleetkit is willing to wait.",
    person: false,
  },
  PROVIDER_NAME_CONFLICT: {
    summary:
      'A Hetzner Cloud resource already has that name (uniqueness_error) and is not the node fleetkit asked for.',
    person: true,
  },
  PROVIDER_INPUT_INVALID: {
    summary: 'Hetzner Cloud refused the request as invalid (invalid_input, json_error): a field named in the message.',
    person: true,
  },
  PROVIDER_UNAVAILABLE: {
    summary:
      'Hetzner Cloud did not answer usably (5xx, timeout, connection failure, maintenance), also after the retries a read gets.',
    person: false,
  },
  PROVIDER_ACTION_FAILED: {
    summary: 'A Hetzner Cloud action (create, delete, firewall change) finished with status error.',
    person: true,
  },
  PROVIDER_ERROR: {
    summary: 'Hetzner Cloud refused a request with an error code fleetkit has no specific handling for.',
    person: true,
  },
  PROVIDER_RESPONSE_INVALID: {
    summary:
      'A Hetzner Cloud answer lacks a field fleetkit uses, or has it in another shape (a server without a usable id, an action without a status).',
    person: false,
  },
  PROVIDER_RESPONSE_TOO_LARGE: {
    summary: 'A Hetzner Cloud answer was larger than fleetkit reads (4 MiB); the request was aborted.',
    person: true,
  },
  PROVIDER_STUB_BIND_FAILED: {
    summary: 'The local Hetzner Cloud API stub could not listen on the port it was given.',
    person: true,
  },
  PROVIDER_STUB_NEEDS_ROOT: {
    summary: 'fleetkit provider stub --boot was run without root: it makes a bridge, loop devices and containers.',
    person: true,
  },
  PROVIDER_STUB_TOOL_MISSING: {
    summary:
      'A program the local cloud runs (debootstrap, systemd-nspawn, ...) is not installed: the message names its package.',
    person: true,
  },
  PROVIDER_STUB_IMAGE_BUILD_FAILED: {
    summary: 'The local cloud could not build a Debian image with debootstrap (mirror unreachable, disk full, ...).',
    person: false,
  },
  PROVIDER_STUB_BRIDGE_IN_USE: {
    summary:
      "The local cloud's bridge already exists: another stub --boot runs, or one was killed before it cleaned up.",
    person: true,
  },
} as const satisfies Record<string, FailureCodeSpec>
