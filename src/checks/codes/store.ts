// Failure codes of the state store: reaching PostgreSQL (embedded or DATABASE_URL),
// the schema version and migrations, and the local state directory.
import type { FailureCodeSpec } from '../failure-code-spec.js'

export const STORE_CODES = {
  STATE_UNREACHABLE: {
    summary:
      'The PostgreSQL server holding fleetkit state could not be reached, or the connection to it broke during the command.',
    person: false,
    exitCode: 69,
  },
  STATE_DISK_FULL: {
    summary:
      'PostgreSQL could not write fleetkit state: the disk of its data directory is full (SQLSTATE 53100); the change was not made.',
    person: false,
    exitCode: 74,
  },
  STATE_SERVER_FAILED: {
    summary:
      'PostgreSQL failed a statement for a reason of its own (out of memory, an I/O error, a read-only standby, a cancelled statement); what was not committed was rolled back.',
    person: false,
    exitCode: 69,
  },
  STATE_AUTH_REFUSED: {
    summary: 'The PostgreSQL server refused the user or password fleetkit connected with.',
    person: true,
    exitCode: 77,
  },
  STATE_NEWER_THAN_CLI: {
    summary: 'The database was migrated by a newer fleetkit; this CLI refuses to use it.',
    person: true,
    exitCode: 65,
  },
  // A person: migrating a shared database is a decision (older CLIs and gateways on it are then refused).
  STATE_SCHEMA_OLD: {
    summary: 'The DATABASE_URL database is at an older schema than this fleetkit; only fleetkit db migrate changes it.',
    person: true,
    exitCode: 75,
  },
  STATE_MIGRATION_FAILED: { summary: 'A schema migration failed and was rolled back.', person: true },
  STATE_DIR_UNUSABLE: {
    summary: 'The state directory cannot be created, written, or reached by the postgres user.',
    person: false,
    exitCode: 73,
  },
  STATE_EMBEDDED_START_FAILED: {
    summary: 'The embedded PostgreSQL server in the state directory did not initialise or start.',
    person: false,
    exitCode: 69,
  },
  STATE_EMBEDDED_BUSY: {
    summary:
      'Another fleetkit process (a start, a restore to a time, a stop) held the embedded PostgreSQL start lock longer than db stop or db restore --to waits; nothing was stopped or restored.',
    person: false,
    exitCode: 75,
  },
  STATE_SERVER_NOT_STARTABLE: {
    summary:
      "The embedded PostgreSQL is not running and its data directory belongs to another account (the gateway service's): only that account or root may start it.",
    person: false,
    exitCode: 69,
  },
} as const satisfies Record<string, FailureCodeSpec>
