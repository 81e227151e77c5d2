// `fleetkit db restore FILE`: everything that can fail first (the archive extracted privately, its
// manifest read, every member's SHA-256 checked, the schema version and the PKI target judged, all
// before the database is opened, so a refused file starts no server), then the database judged, the
// PKI staged beside its directory, the database replaced in one transaction (snapshot-load.ts: a
// failure changes nothing), then the staged PKI renamed into place.
//
// From the database check to the PKI rename a restore holds the database's restore lock and the PKI
// directory's lock (pki-lock.ts), and judges the target again under them: of two restores at once into
// one target the second finds the first's state (RESTORE_TARGET_NOT_EMPTY without --force), and no
// PKI command (ca rotate, ca init, a backup's copy) runs on a directory being replaced.
import type { PointInTimeResult } from '../../store/embedded/point-in-time.js'
import { randomBytes } from 'node:crypto'
import { createReadStream, existsSync } from 'node:fs'
import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rename, rm, rmdir, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'

import type { Queryable, StatePool } from '../../store/transaction.js'

import { FleetkitError, toFleetkitError } from '../../checks/fleetkit-error.js'
import { processIsAlive } from '../../fs/file-lock.js'
import { syncDirectory } from '../../fs/atomic-file.js'
import { extractTarGz, type TarMember } from '../../fs/tar-gz.js'
import { TarFormatError } from '../../fs/ustar.js'
import { appendEvent } from '../../store/events.js'
import { loadMigrations, type Migration } from '../../store/migrate.js'
import { currentSchema, tablesWithRows } from '../../store/backup/schema-objects.js'
import { replaceWithSnapshot, type TableToLoad, withRestoreLock } from '../../store/backup/snapshot-load.js'
import { withPkiLock } from '../../pki/pki-lock.js'
import { restoreStagingPattern } from '../../pki/restore-leftovers.js'
import { BACKUP_FORMAT, BACKUP_FORMAT_VERSION, type BackupManifest } from './db-backup.js'
import { makeDirectories } from '../../fs/make-directories.js'

/** What `db restore --json` prints: a backup file's restore, or (--to) the embedded database's to a time. */
export type DbRestoreOutput = RestoreResult | PointInTimeResult

export interface RestoreResult {
  file: string
  /** @format date-time */
  takenAt: string
  /** The backup's schema version, and the one after the migrations this fleetkit applied. */
  backupSchemaVersion: number
  schemaVersion: number
  migrated: { version: number; name: string }[]
  tables: { name: string; rows: number }[]
  pki: {
    restored: boolean
    dir: string
    /** Where the PKI directory that was there went (--force); null when there was none. */
    keptAside: string | null
  }
}

/**
 * A filesystem that could not take the unpacked backup: it is TMPDIR's, which the operator did not
 * name and may not guess from a temporary path; say so, and how to unpack elsewhere.
 */
function unpackFailed(file: string, error: unknown): unknown {
  const coded = toFleetkitError(error)
  if (coded.code !== 'FILESYSTEM_WRITE_FAILED') return error
  return new FleetkitError(coded.code, `unpacking ${file} into TMPDIR (${tmpdir()}): ${coded.message}`, {
    actions: [
      coded.actions[0]!,
      `or unpack it on a filesystem with room: TMPDIR=DIR fleetkit db restore ${file}`,
      'then run the command again',
    ],
    data: { ...coded.data, tmpdir: tmpdir() },
    cause: error,
  })
}

/**
 * How much a backup may unpack to: UNPACK_RATIO times its own size, at least UNPACK_FLOOR_BYTES. A backup's
 * tables are JSON lines, which gzip shrinks about 5 to 20 times (rows of nothing but sequential ids and
 * timestamps: 17); its PKI files not at all. A gzip bomb (about 1000 times: 3 MB held 3 GiB of zeros) is
 * refused at the member that would pass the ceiling, before a byte of it is written into TMPDIR.
 */
const UNPACK_RATIO = 100
const UNPACK_FLOOR_BYTES = 64 * 1024 * 1024

async function unpackCeiling(file: string): Promise<number> {
  return Math.max(UNPACK_FLOOR_BYTES, UNPACK_RATIO * (await stat(file)).size)
}

function invalid(file: string, why: string, cause?: unknown): FleetkitError {
  return new FleetkitError(
    'BACKUP_INVALID',
    `${file} is not a fleetkit backup this fleetkit can restore: ${why}; nothing was changed`,
    {
      actions: ['restore a file written by fleetkit db backup, unchanged (copy it again if it was damaged in transit)'],
      data: { file, problem: why },
      ...(cause === undefined ? {} : { cause }),
    },
  )
}

async function readManifest(file: string, dir: string, members: TarMember[]): Promise<BackupManifest> {
  if (!members.some((m) => m.name === 'manifest.json')) throw invalid(file, 'it has no manifest.json')
  let manifest: BackupManifest
  try {
    manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as BackupManifest
  } catch (error) {
    throw invalid(file, 'its manifest.json is not JSON', error)
  }
  if (manifest?.format !== BACKUP_FORMAT || manifest.formatVersion !== BACKUP_FORMAT_VERSION)
    throw invalid(file, `its format is not ${BACKUP_FORMAT} version ${BACKUP_FORMAT_VERSION}`)
  if (!Number.isInteger(manifest.schemaVersion) || !Array.isArray(manifest.tables) || !Array.isArray(manifest.pki))
    throw invalid(file, 'its manifest lacks the schema version, the tables or the PKI list')
  // Every member the manifest names is there with its checksum, and nothing else is.
  const extracted = new Map(members.filter((m) => m.type === 'file').map((m) => [m.name, m.sha256]))
  const listed = [...manifest.tables.map((t) => [t.member, t.sha256]), ...manifest.pki.map((p) => [p.member, p.sha256])]
  for (const [member, sha256] of listed) {
    if (!extracted.has(member!)) throw invalid(file, `member ${member} is missing`)
    if (extracted.get(member!) !== sha256) throw invalid(file, `member ${member} does not match its checksum`)
  }
  const named = new Set(['manifest.json', ...listed.map(([member]) => member!)])
  const extra = [...extracted.keys()].find((name) => !named.has(name))
  if (extra !== undefined) throw invalid(file, `member ${extra} is not in its manifest`)
  if (manifest.pki.some((p) => !/^pki\/[A-Za-z0-9][A-Za-z0-9._-]*$/.test(p.member)))
    throw invalid(file, 'a PKI member has a name a PKI file cannot have')
  return manifest
}

/** A table's JSON lines in batches, read from the extracted member. */
function batchesOf(path: string, size = 2000): () => AsyncIterable<string[]> {
  return async function* () {
    const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity })
    let batch: string[] = []
    for await (const line of lines) {
      if (line === '') continue
      batch.push(line)
      if (batch.length >= size) {
        yield batch
        batch = []
      }
    }
    if (batch.length > 0) yield batch
  }
}

/** A target that holds state: the tables with rows (null: not looked at) or the PKI directory (null: empty). */
function targetNotEmpty(file: string, tables: string[] | null, pkiDir: string | null): FleetkitError {
  const what = pkiDir ? `${pkiDir} holds a PKI` : `the database holds state (${(tables ?? []).slice(0, 4).join(', ')})`
  return new FleetkitError(
    'RESTORE_TARGET_NOT_EMPTY',
    `${what}; a restore replaces it only with --force; nothing was changed`,
    {
      actions: [`fleetkit db backup   (keep what is there first)`, `fleetkit db restore ${file} --force`],
      data: { tables, pkiDir },
    },
  )
}

async function hasFiles(dir: string): Promise<boolean> {
  return existsSync(dir) && (await readdir(dir)).some((name) => !name.startsWith('.'))
}

/**
 * Runs `fn` holding the lock of the PKI directory a restore replaces (`restoring`: the backup has a
 * PKI). A directory that does not exist yet is made to hold the lock (`made`, for `fn`), and removed
 * again when the restore fails, so a failed restore leaves no PKI directory it made.
 */
async function withTargetPkiLock<T>(
  pkiDir: string,
  restoring: boolean,
  timeoutMs: number | undefined,
  fn: (made: boolean) => Promise<T>,
): Promise<T> {
  if (!restoring) return fn(false)
  const made = !existsSync(pkiDir)
  try {
    return await withPkiLock(pkiDir, () => fn(made), {
      create: true,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    })
  } catch (error) {
    // Empty once the lock is gone; a directory another command wrote in meanwhile is left to it.
    if (made) await rmdir(pkiDir).catch(() => undefined)
    throw error
  }
}

/** `fleetkit-restore-<pid>-XXXXXX`: a restore's unpacked backup (with the CA key) under the OS temp directory. */
const WORK_DIR_PREFIX = 'fleetkit-restore-'
const WORK_DIR = /^fleetkit-restore-([0-9]+)-[A-Za-z0-9]{6}$/

/** Remove the unpacked backups that restores killed before their cleanup left (their process is gone). */
async function removeDeadRestoreWorkDirs(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[])
  for (const name of names) {
    const pid = WORK_DIR.exec(name)?.[1]
    if (pid === undefined || Number(pid) === process.pid || processIsAlive(Number(pid))) continue
    await rm(join(dir, name), { recursive: true, force: true }).catch(() => undefined)
  }
}

/** Remove the staged PKI (and the lock-only directory) a killed restore left beside `pkiDir`; call it holding the locks. */
async function removeStagedPkis(pkiDir: string): Promise<void> {
  const pattern = restoreStagingPattern(pkiDir)
  const names = await readdir(dirname(pkiDir)).catch(() => [] as string[])
  const stale = names.filter((name) => pattern.test(name))
  for (const name of stale) await rm(join(dirname(pkiDir), name), { recursive: true, force: true })
  if (stale.length > 0) await syncDirectory(dirname(pkiDir))
}

export async function restoreState(options: {
  /**
   * Opens the target database, runs `work` on it and closes it. Called only once the file and the PKI
   * target passed their checks: opening the embedded database starts its server (and creates it).
   */
  withPool: <T>(work: (pool: StatePool) => Promise<T>) => Promise<T>
  file: string
  pkiDir: string
  /** Replace a database or PKI directory that holds state (the PKI one is kept aside, renamed). */
  force: boolean
  actor: string
  now: Date
  migrations?: Migration[]
  progress?: (message: string) => void
  /** How long to wait for a PKI command holding the PKI directory (default: pki-lock.ts's 30 s). */
  pkiLockTimeoutMs?: number
}): Promise<RestoreResult> {
  const file = resolve(options.file)
  const progress = options.progress ?? (() => {})
  if (!existsSync(file)) throw invalid(file, 'there is no such file')
  const migrations = options.migrations ?? (await loadMigrations())
  const latest = migrations.reduce((top, m) => Math.max(top, m.version), 0)
  // Named with this process's id, so a later restore can tell (and remove) the unpacked backups of dead runs.
  await removeDeadRestoreWorkDirs(tmpdir())
  const work = await mkdtemp(join(tmpdir(), `${WORK_DIR_PREFIX}${process.pid}-`))
  const staged = `${options.pkiDir}.restore-${randomBytes(6).toString('hex')}`
  try {
    progress(`reading ${file}`)
    let members: TarMember[]
    try {
      members = await extractTarGz(file, work, { maxBytes: await unpackCeiling(file) })
    } catch (error) {
      if (error instanceof TarFormatError) throw invalid(file, error.message, error)
      throw unpackFailed(file, error)
    }
    const manifest = await readManifest(file, work, members)
    if (manifest.schemaVersion > latest) {
      throw new FleetkitError(
        'RESTORE_SCHEMA_NEWER',
        `${file} was taken at schema version ${manifest.schemaVersion}; this fleetkit knows up to ${latest}: restore it with that fleetkit or a newer one; nothing was changed`,
        {
          actions: ['npm install -g fleetkit@latest (or the version that took it)'],
          data: { file, schemaVersion: manifest.schemaVersion, latest },
        },
      )
    }
    // The PKI target is judged before the database is opened: a refusal here starts no server.
    const pkiThere = manifest.pki.length > 0 && (await hasFiles(options.pkiDir))
    if (!options.force && pkiThere) throw targetNotEmpty(file, null, options.pkiDir)
    const restoringPki = manifest.pki.length > 0
    return await options.withPool((pool) =>
      withRestoreLock(pool, () =>
        withTargetPkiLock(options.pkiDir, restoringPki, options.pkiLockTimeoutMs, async (madePkiDir) => {
          // Under the locks no other restore into this PKI directory runs: a staged PKI beside it is a killed
          // run's (killed before or after its commit: this run stages the backup's PKI again either way).
          if (restoringPki) await removeStagedPkis(options.pkiDir)
          // Judged again under the locks: another restore or `ca init` may have filled it meanwhile.
          if (!options.force && restoringPki && (await hasFiles(options.pkiDir)))
            throw targetNotEmpty(file, null, options.pkiDir)
          const refuseRows = async (q: Queryable, schema?: string) => {
            if (options.force) return
            const busy = await tablesWithRows(q, schema ?? (await currentSchema(q)))
            if (busy.length > 0) throw targetNotEmpty(file, busy, null)
          }
          await refuseRows(pool)
          if (restoringPki) {
            progress(`staging the PKI beside ${options.pkiDir}`)
            await makeDirectories(dirname(options.pkiDir))
            await mkdir(staged, { mode: 0o700 })
            for (const p of manifest.pki) {
              const target = join(staged, p.member.slice('pki/'.length))
              await copyFile(join(work, p.member), target)
              await chmod(target, p.mode & 0o777)
            }
          }
          progress(`replacing the database with the snapshot of ${manifest.takenAt} (one transaction)`)
          const loaded = await replaceWithSnapshot(
            pool,
            {
              schemaVersion: manifest.schemaVersion,
              sequences: manifest.sequences,
              tables: manifest.tables.map((t): TableToLoad => ({
                name: t.name,
                columns: t.columns,
                rows: t.rows,
                batches: batchesOf(join(work, t.member)),
              })),
            },
            {
              migrations,
              // The rows are judged a last time in the replacing transaction, its tables locked.
              check: (client, schema) => refuseRows(client, schema),
              record: async (client, result) => {
                await appendEvent(client, {
                  kind: 'state_restored',
                  data: {
                    taken_at: manifest.takenAt,
                    backup_schema_version: manifest.schemaVersion,
                    schema_version: result.schemaVersion,
                    pki_restored: restoringPki,
                    actor: options.actor,
                  },
                })
              },
            },
          )
          let keptAside: string | null = null
          if (restoringPki) {
            if (madePkiDir) {
              // The directory made for the lock holds nothing but it: replaced, and removed.
              const lockHolder = `${options.pkiDir}.restore-lock-${randomBytes(6).toString('hex')}`
              await rename(options.pkiDir, lockHolder)
              await rename(staged, options.pkiDir)
              await rm(lockHolder, { recursive: true, force: true })
            } else {
              keptAside = `${options.pkiDir}.before-restore-${options.now.toISOString().replace(/[:.]/g, '')}`
              await rename(options.pkiDir, keptAside)
              await rename(staged, options.pkiDir)
            }
            await syncDirectory(dirname(options.pkiDir))
          }
          return {
            file,
            takenAt: manifest.takenAt,
            backupSchemaVersion: manifest.schemaVersion,
            schemaVersion: loaded.schemaVersion,
            migrated: loaded.migrated,
            tables: loaded.tables,
            pki: { restored: restoringPki, dir: options.pkiDir, keptAside },
          }
        }),
      ),
    )
  } finally {
    await rm(work, { recursive: true, force: true })
    await rm(staged, { recursive: true, force: true })
  }
}
