// Failure codes of `fleetkit db backup` and `fleetkit db restore` (src/lifecycle/state/db-backup.ts,
// db-restore.ts; the snapshot itself in src/store/snapshot-*.ts), and of continuous archiving and
// the restore to a point in time (src/lifecycle/state/db-archive.ts, src/store/embedded/point-in-time.ts).
import type { FailureCodeSpec } from '../failure-code-spec.js'

export const BACKUP_CODES = {
  BACKUP_OUTPUT_EXISTS: {
    summary: 'The backup file named already exists: a backup never overwrites one; nothing was written.',
    person: true,
    exitCode: 2,
  },
  BACKUP_INVALID: {
    summary:
      'The file is not a fleetkit backup this fleetkit can restore whole (not an archive, a member missing, a checksum that differs, a manifest or table that does not match); nothing was changed.',
    person: true,
  },
  RESTORE_TARGET_NOT_EMPTY: {
    summary: 'The database (or PKI directory) to restore into already holds fleetkit state; nothing was changed.',
    person: true,
  },
  RESTORE_SCHEMA_NEWER: {
    summary: 'The backup was taken by a newer fleetkit (a schema version this one does not know); nothing was changed.',
    person: true,
  },
  RESTORE_TARGET_BUSY: {
    summary:
      'Another session (a running gateway or command, or another restore) holds fleetkit tables or the restore lock, and the restore waited for them in vain; nothing was changed.',
    person: false,
  },
  ARCHIVE_NOT_EMBEDDED: {
    summary:
      'Continuous archiving and the restore to a time are for the embedded server; a DATABASE_URL server is archived by whoever runs it. Nothing was changed.',
    person: true,
    exitCode: 2,
  },
  ARCHIVE_DIR_INVALID: {
    summary:
      'The archive directory is not an absolute path of letters, digits and . _ - / (it goes into a shell command), or it cannot be made usable; nothing was changed.',
    person: true,
    exitCode: 2,
  },
  ARCHIVE_NOT_WORKING: {
    summary:
      'Archiving was turned on but PostgreSQL could not copy a WAL segment into the directory (its archive_command failed); the settings were put back as they were.',
    person: true,
  },
  ARCHIVE_NOT_ENABLED: {
    summary:
      'The embedded server does not archive its WAL (fleetkit db archive enable DIR first); nothing was changed.',
    person: true,
    exitCode: 2,
  },
  ARCHIVE_BUSY: {
    summary:
      'Another fleetkit command (a restore to a time, a prune, an archive enable, disable or base backup) held the archive or its server longer than this one waits; nothing was changed.',
    person: false,
  },
  ARCHIVE_REMOTE_INVALID: {
    summary:
      'The off-host archive named is not usable: not an ssh://user@host[:port]/absolute-path URL, a host key that is not one known_hosts key for that host, or an identity file that cannot be read; nothing was recorded.',
    person: true,
    exitCode: 2,
  },
  ARCHIVE_REMOTE_NOT_SET: {
    summary:
      'No off-host archive is recorded for this state directory (fleetkit db archive remote add URL first); nothing was shipped or read.',
    person: true,
    exitCode: 2,
  },
  ARCHIVE_REMOTE_UNREACHABLE: {
    summary:
      'The off-host archive host did not answer or refused the login; local archiving goes on, and the next ship sends what was not shipped.',
    person: false,
  },
  ARCHIVE_REMOTE_HOST_KEY_MISMATCH: {
    summary:
      'The off-host archive host presented an SSH host key other than the pinned one; fleetkit did not log in and sent nothing.',
    person: true,
  },
  ARCHIVE_REMOTE_FAILED: {
    summary:
      'The off-host archive host took the login but a file operation failed there (permission, full disk, a copy whose SHA-256 read back differs); the file was not counted as shipped.',
    person: true,
  },
  ARCHIVE_REMOTE_FOREIGN: {
    summary:
      "The off-host archive directory holds another PostgreSQL cluster's archive (its cluster.json names another system identifier): two control hosts would skip each other's segments as shipped; nothing was sent or recorded.",
    person: true,
    exitCode: 2,
  },
  ARCHIVE_VERIFY_FAILED: {
    summary:
      'fleetkit db archive verify found a file whose SHA-256 differs, a gap in the WAL from the newest base backup, or a restore from it that did not reach the newest segment.',
    person: true,
  },
  PITR_NO_BASE_BACKUP: {
    summary:
      'The archive holds no base backup that ended at or before the time asked for (or it is damaged); nothing was changed.',
    person: true,
  },
  PITR_TARGET_NOT_REACHED: {
    summary:
      'Replaying the archived WAL ended before the time asked for (it lies after the last archived segment, or a segment is missing); the database was put back as it was.',
    person: true,
  },
} as const satisfies Record<string, FailureCodeSpec>
