// Failure codes of the gateway: its configuration and listeners, agent
// authentication, job leases, and `fleetkit node check`.
import type { FailureCodeSpec } from '../failure-code-spec.js'

export const GATEWAY_CODES = {
  GATEWAY_CONFIG_INVALID: {
    summary: 'A gateway environment variable has a value the gateway cannot use.',
    person: false,
    exitCode: 2,
  },
  GATEWAY_DESCRIPTOR_LIMIT: {
    summary:
      "The gateway's open-files limit (RLIMIT_NOFILE, after raising it to the hard limit) is below its listeners' connection caps plus the descriptors it keeps in reserve.",
    person: false,
    exitCode: 2,
  },
  GATEWAY_INSTALL_NOT_ROOT: {
    summary: 'fleetkit gateway install or uninstall was run by a user other than root; nothing was changed.',
    person: false,
    exitCode: 77,
  },
  GATEWAY_INSTALL_NO_SYSTEMD: {
    summary: 'fleetkit gateway install or uninstall found no running systemd on this machine; nothing was changed.',
    person: true,
  },
  GATEWAY_INSTALL_PATH_UNUSABLE: {
    summary:
      'A path the gateway service needs (this fleetkit, its Node.js, the state directory) is hidden from it or unreadable by its account, or cannot go into a unit file; nothing was changed.',
    person: true,
  },
  GATEWAY_INSTALL_SERVER_RUNNING: {
    summary:
      "The state directory's embedded PostgreSQL runs as another account than the gateway's; install (or uninstall --remove-account) changed nothing.",
    person: false,
  },
  GATEWAY_INSTALL_BUSY: {
    summary:
      'Another fleetkit gateway install or uninstall held the machine-wide install lock for longer than the wait (5 minutes); nothing was changed.',
    person: false,
    // EX_TEMPFAIL, as its BUSY siblings: a script retries on 75.
    exitCode: 75,
  },
  GATEWAY_INSTALL_FAILED: {
    summary:
      'A system command of fleetkit gateway install or uninstall (groupadd, useradd, systemctl, ...) failed, or the installed gateway did not come up.',
    person: true,
  },
  GATEWAY_BIND_FAILED: {
    summary: 'The gateway could not listen on a configured address (in use, not local, or not permitted).',
    person: false,
  },
  CERTIFICATE_REFUSED: {
    summary:
      'An agent presented a client certificate that is unknown, revoked, expired, or of a node that may not connect.',
    person: false,
  },
  NODE_NOT_ACTIVE: {
    summary: 'A node asked for work while it is not active (draining, unhealthy, parked ...).',
    person: false,
  },
  NODE_LOST: {
    summary: 'A node that was declared lost came back; it must abandon its jobs and be re-admitted.',
    person: false,
  },
  LEASE_CONFLICT: {
    summary:
      'A job heartbeat or completion carried a stale lease token, or came from a fenced node; nothing was written.',
    person: false,
  },
  REQUEST_INVALID: {
    summary:
      'A request to the gateway was not valid JSON of the expected shape (or held a NUL or an unpaired surrogate), or too large.',
    person: false,
  },
  RATE_LIMITED: {
    summary: 'The gateway shed load: too many enrollment or renewal attempts from one source or in total.',
    person: false,
  },
  ROUTE_NOT_FOUND: { summary: 'A request named a route the gateway listener does not serve.', person: false },
  METHOD_NOT_ALLOWED: {
    summary: 'A request used an HTTP method the named gateway route does not take.',
    person: false,
  },
  GATEWAY_OVERLOADED: {
    summary:
      'The gateway answered 503: it is shedding load (too many requests in progress, or its event loop falling behind); nothing was done, agents retry after Retry-After.',
    person: false,
  },
  STATE_UNAVAILABLE: {
    summary:
      'The gateway answered 503: its PostgreSQL is unreachable or its connection pool is exhausted; agents retry after Retry-After.',
    person: false,
  },
  NODE_UNKNOWN: { summary: 'No node of that id is in the state database.', person: false },
  NODE_CHECK_TIMEOUT: {
    summary: 'fleetkit node check queued a checks job but no result arrived in time.',
    person: false,
  },
  NODE_NOT_ENROLLED: {
    summary: 'fleetkit node check was asked for a node whose agent has not enrolled, so no agent can take the job.',
    person: false,
  },
  NODE_CHECK_RESULT_INVALID: {
    summary:
      'The checks result a node reported cannot be read (unknown status, malformed check ID, unregistered code, no checks).',
    person: false,
  },
  NODE_CHECK_INTERRUPTED: {
    summary:
      'fleetkit node check was interrupted (Ctrl-C or SIGTERM); its job was withdrawn unless an agent had taken it.',
    person: false,
    exitCode: 130,
  },
  NODE_CHECK_FAILED: {
    summary: 'The node ran its host checks and at least one failed (or the job failed).',
    person: false,
  },
} as const satisfies Record<string, FailureCodeSpec>
