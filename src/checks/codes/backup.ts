// Failure codes of `fleetkit db backup` and `fleetkit db restore` (src/lifecycle/db-backup.ts,
// db-restore.ts; the snapshot itself in src/store/snapshot-*.ts).
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
      'Another session (a running gateway or command) holds fleetkit tables, and the restore waited for them in vain; nothing was changed.',
    person: false,
  },
} as const satisfies Record<string, FailureCodeSpec>
