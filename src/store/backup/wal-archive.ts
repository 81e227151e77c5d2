// The SQL of continuous archiving (the embedded server's WAL copied out by its own archive_command):
// the settings (ALTER SYSTEM, so they live in the data directory and every start keeps them), the
// archiver's progress, and the non-exclusive base backup API (pg_backup_start/pg_backup_stop, one session).
import type pg from 'pg'

import { type Queryable, type StatePool, type StateTransaction, withSession } from '../transaction.js'

/** What PostgreSQL's archiver says: its settings, its last success and failure, the WAL still waiting. */
export interface ArchiverStatus {
  /** archive_mode is on (in force: a change needs a restart). */
  enabled: boolean
  archiveCommand: string
  /**
   * @minimum 0
   * @asType integer
   */
  archiveTimeoutSeconds: number
  lastArchivedWal: string | null
  /** @format date-time */
  lastArchivedAt: string | null
  lastFailedWal: string | null
  /** @format date-time */
  lastFailedAt: string | null
  /**
   * @minimum 0
   * @asType integer
   */
  failedCount: number
  /**
   * Segments PostgreSQL finished and has not archived yet (their .ready files, a whole number); null
   * when this role may not list pg_wal/archive_status.
   */
  readySegments: number | null
}

export async function readArchiverStatus(q: Queryable): Promise<ArchiverStatus> {
  const { rows } = await q.query<{
    mode: string
    command: string
    timeout: string
    last_archived_wal: string | null
    last_archived_time: Date | null
    last_failed_wal: string | null
    last_failed_time: Date | null
    failed_count: string
  }>(
    `SELECT current_setting('archive_mode') AS mode, current_setting('archive_command') AS command,
            current_setting('archive_timeout') AS timeout, a.last_archived_wal, a.last_archived_time,
            a.last_failed_wal, a.last_failed_time, a.failed_count
       FROM pg_stat_archiver a`,
  )
  const row = rows[0]!
  return {
    enabled: row.mode === 'on' || row.mode === 'always',
    archiveCommand: row.command,
    archiveTimeoutSeconds: parseSeconds(row.timeout),
    lastArchivedWal: row.last_archived_wal,
    lastArchivedAt: row.last_archived_time?.toISOString() ?? null,
    lastFailedWal: row.last_failed_wal,
    lastFailedAt: row.last_failed_time?.toISOString() ?? null,
    failedCount: Number(row.failed_count),
    readySegments: await countReadySegments(q),
  }
}

/** pg_ls_archive_statusdir needs superuser or pg_monitor (the embedded server's role is superuser). */
async function countReadySegments(q: Queryable): Promise<number | null> {
  const { rows } = await q.query<{ allowed: boolean }>(
    `SELECT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) OR pg_has_role('pg_monitor', 'MEMBER') AS allowed`,
  )
  if (!rows[0]?.allowed) return null
  const ready = await q.query<{ n: string }>(
    `SELECT count(*) AS n FROM pg_ls_archive_statusdir() WHERE name LIKE '%.ready'`,
  )
  return Number(ready.rows[0]!.n)
}

/** archive_timeout as PostgreSQL shows it ('5min', '60s', '0'). */
function parseSeconds(shown: string): number {
  const match = /^(\d+)\s*(ms|s|min|h|d)?$/.exec(shown.trim())
  if (!match) return 0
  const factor = { ms: 0.001, s: 1, min: 60, h: 3600, d: 86_400 }[match[2] ?? 's'] ?? 1
  return Math.round(Number(match[1]) * factor)
}

/** Archiving on at the next start: archive_mode, the command that copies a segment out, and how often a quiet server switches. */
export async function setArchiveSettings(
  q: Queryable,
  settings: { archiveCommand: string; archiveTimeoutSeconds: number },
): Promise<void> {
  await q.query(`ALTER SYSTEM SET archive_mode = 'on'`)
  await alterSystem(q, 'archive_command', settings.archiveCommand)
  await q.query(`ALTER SYSTEM SET archive_timeout = ${Math.trunc(settings.archiveTimeoutSeconds)}`)
}

/** ALTER SYSTEM takes no parameters: the server quotes the value (format's %L), then runs the statement. */
async function alterSystem(q: Queryable, name: string, value: string): Promise<void> {
  if (!/^[a-z_]+$/.test(name)) throw new TypeError(`not a setting name: ${name}`)
  const { rows } = await q.query<{ sql: string }>(`SELECT format('ALTER SYSTEM SET ${name} = %L', $1::text) AS sql`, [
    value,
  ])
  await q.query(rows[0]!.sql)
}

/** Archiving off at the next start. */
export async function resetArchiveSettings(q: Queryable): Promise<void> {
  for (const name of ['archive_mode', 'archive_command', 'archive_timeout']) await q.query(`ALTER SYSTEM RESET ${name}`)
}

/** After a recovery: the settings that drove it leave postgresql.auto.conf, so no later start sees them. */
export async function resetRecoverySettings(q: Queryable): Promise<void> {
  for (const name of ['restore_command', 'recovery_target_time', 'recovery_target_action'])
    await q.query(`ALTER SYSTEM RESET ${name}`)
  await q.query('SELECT pg_reload_conf()')
}

/** Ends the current WAL segment so the archiver copies it now (a backup's end, a test). */
export async function switchWal(q: Queryable): Promise<string> {
  const { rows } = await q.query<{ wal: string }>('SELECT pg_walfile_name(pg_switch_wal()) AS wal')
  return rows[0]!.wal
}

export interface BackupStart {
  startLsn: string
  /** The database's clock when the backup began. */
  startedAt: Date
  timeline: number
  systemIdentifier: string
}

/**
 * Begins a non-exclusive base backup on this session (`client` must stay the same until
 * stopBaseBackup): a checkpoint now (fast), and from here WAL replay repairs whatever the copy reads mid-write.
 */
export async function startBaseBackup(client: pg.ClientBase, label: string): Promise<BackupStart> {
  const { rows } = await client.query<{ lsn: string; now: Date; tli: number; sysid: string }>(
    `SELECT pg_backup_start($1, true)::text AS lsn, clock_timestamp() AS now,
            (SELECT timeline_id FROM pg_control_checkpoint()) AS tli,
            (SELECT system_identifier::text FROM pg_control_system()) AS sysid`,
    [label],
  )
  const row = rows[0]!
  return { startLsn: row.lsn, startedAt: row.now, timeline: row.tli, systemIdentifier: row.sysid }
}

export interface BackupStop {
  stopLsn: string
  /** When the backup ended and (wait_for_archive) its last WAL segment was archived: the earliest restorable time. */
  stoppedAt: Date
  labelFile: string
  tablespaceMap: string
}

/** Ends the backup this session began, waiting until the WAL it needs is archived. */
export async function stopBaseBackup(client: pg.ClientBase): Promise<BackupStop> {
  const { rows } = await client.query<{ lsn: string; labelfile: string; spcmapfile: string | null; now: Date }>(
    'SELECT lsn::text AS lsn, labelfile, spcmapfile, clock_timestamp() AS now FROM pg_backup_stop(true)',
  )
  const row = rows[0]!
  return { stopLsn: row.lsn, stoppedAt: row.now, labelFile: row.labelfile, tablespaceMap: row.spcmapfile ?? '' }
}

/** Whether the server still replays WAL (a restore to a time not promoted yet) and the last transaction it replayed. */
export async function recoveryProgress(
  q: Queryable,
): Promise<{ inRecovery: boolean; lastReplayedAt: Date | null; lastReplayedLsn: string | null }> {
  const { rows } = await q.query<{ rec: boolean; at: Date | null; lsn: string | null }>(
    'SELECT pg_is_in_recovery() AS rec, pg_last_xact_replay_timestamp() AS at, pg_last_wal_replay_lsn()::text AS lsn',
  )
  return { inRecovery: rows[0]!.rec, lastReplayedAt: rows[0]!.at, lastReplayedLsn: rows[0]!.lsn }
}

/** A checkpoint writes WAL, so a switch right after it has a segment to end even on an idle server. */
export async function checkpoint(q: Queryable): Promise<void> {
  await q.query('CHECKPOINT')
}

/**
 * A session of its own for a base backup (pg_backup_start and stop must run on one connection), its
 * statements bounded: pg_backup_stop waits for the archive, and a stalled archiver must end it, not hang it.
 */
export function withBackupSession<T>(pool: StatePool, fn: (session: StateTransaction) => Promise<T>): Promise<T> {
  return withSession(pool, async (session) => {
    await session.query(`SET statement_timeout = '300s'`)
    return fn(session)
  })
}
