// The off-host copy of the WAL archive (`fleetkit db archive remote add`, `fleetkit db archive ship`).
// Shipping runs after the local copy, apart from PostgreSQL: archive_command stays a local cp, so a
// remote that is down never holds up the server; a timer runs `ship`, which sends every finished file of
// the local archive the remote does not hold yet. Each file goes to `<name>.part`, is fsynced, read back
// and its SHA-256 compared with the local file's, then renamed into place; its checksum goes beside it
// as `<name>.sha256` last. A file with its `.sha256` is shipped: a run killed at any point is resumed by
// the next, which sends again only what has no checksum yet.
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { Env } from '../../config/state-dir.js'
import { resolvePkiDir } from '../../pki/pki-dir.js'
import {
  archiveLayout,
  readArchiveConfig,
  requireEmbedded,
  withArchiveShipLock,
} from '../../store/embedded/archive-dir.js'
import {
  type ArchiveRemote,
  checkedArchiveRemote,
  putBackRemoteRecordFiles,
  readArchiveRemote,
  readRemoteRecordFiles,
  readShipStatus,
  removeArchiveRemote,
  writeArchiveRemote,
  writeShipStatus,
} from '../../store/embedded/archive-remote.js'
import { appendEvent, type NewEvent } from '../../store/events.js'
import type { StatePool } from '../../store/transaction.js'
import { listBaseBackups } from '../../store/embedded/base-backup.js'
import { embeddedServerPaths, type EmbeddedServerPaths } from '../../store/embedded/paths.js'
import { isFinishedWalFile, segmentOf } from '../../store/embedded/wal-chain.js'
import { readSystemIdentifier } from '../../store/embedded/cluster-identity.js'
import { releasesDirOf } from '../../release/releases-dir.js'
import { shipKit } from './archive-kit.js'
import { claimRemoteForCluster } from './remote-claim.js'
import { type OpenRemoteArchive, shipFile } from './remote-files.js'

export interface RemoteAddResult {
  url: string
  hostKey: string
  identityFile: string
  /** False when the same remote was recorded already. */
  changed: boolean
}

/** What `remote add` and `remove` need to record their change as an event in the state. */
interface RecordOptions {
  /** Who acts, in the event (the command's actor, src/cli/actor.ts). */
  actor: string
  /**
   * Opens the state database, runs `work` on it and closes it: called only once something changed (the
   * checks, the login and the lock come first, so a refused or idle run never starts the server).
   */
  withPool: <T>(work: (pool: StatePool) => Promise<T>) => Promise<T>
}

/**
 * The change made to the record files, then its event; an event that cannot be recorded (the database
 * down or full) puts the files back as they were, so a failed command has changed nothing.
 */
async function changeRecorded(
  paths: EmbeddedServerPaths,
  options: RecordOptions,
  change: () => Promise<void>,
  event: NewEvent,
): Promise<void> {
  const before = await readRemoteRecordFiles(paths)
  await change()
  try {
    await options.withPool((pool) => appendEvent(pool, event))
  } catch (error) {
    await putBackRemoteRecordFiles(paths, before)
    throw error
  }
}

/**
 * `db archive remote add`: the URL, host key and identity are checked, then the host is reached with the
 * key pinned and the archive's directories made there: only a remote that works is recorded, with an
 * archive_remote_added event (the identity's path, never the key).
 */
export async function addArchiveRemote(
  options: RecordOptions & {
    stateDir: string
    env: Env
    url: string
    hostKeyLine: string
    identityFile: string
    now: () => Date
    openRemote: OpenRemoteArchive
    progress: (message: string) => void
  },
): Promise<RemoteAddResult> {
  requireEmbedded(options.env)
  const paths = embeddedServerPaths(options.stateDir)
  const remote = await checkedArchiveRemote(options, options.now())
  await requireArchive(paths)
  const before = await readArchiveRemote(paths)
  const same =
    before?.url === remote.url && before.hostKey === remote.hostKey && before.identityFile === remote.identityFile
  options.progress(`Logging in to ${remote.host}:${remote.port} with its host key pinned`)
  const systemIdentifier = await readSystemIdentifier(paths.dataDir)
  const files = await options.openRemote(remote)
  try {
    await files.mkdirs('wal')
    await files.mkdirs('base')
    // A directory another cluster archives into is refused here, before it is recorded.
    await claimRemoteForCluster(files, remote, systemIdentifier, options.now())
  } finally {
    files.close()
  }
  if (!same) {
    await changeRecorded(paths, options, () => writeArchiveRemote(paths, remote), {
      kind: 'archive_remote_added',
      data: {
        actor: options.actor,
        url: remote.url,
        host_key: remote.hostKey,
        identity_file: remote.identityFile,
        previous_url: before?.url ?? null,
      },
    })
  }
  return { url: remote.url, hostKey: remote.hostKey, identityFile: remote.identityFile, changed: !same }
}

export interface RemoteRemoveResult {
  /** The remote that was recorded (null: none was). */
  url: string | null
  /** False when no remote was recorded: nothing changed. */
  changed: boolean
}

/**
 * `db archive remote remove`: forgets the off-host archive (its record and the last ship's status), under
 * the ship lock so a ship in progress finishes first, with an archive_remote_removed event. The files on
 * the remote host are left as they are; `remote add` with the same URL takes up the directory again (it
 * is this cluster's).
 */
export async function removeRemote(
  options: RecordOptions & { stateDir: string; env: Env },
): Promise<RemoteRemoveResult> {
  requireEmbedded(options.env)
  const paths = embeddedServerPaths(options.stateDir)
  return withArchiveShipLock(paths, async () => {
    const remote = await readArchiveRemote(paths)
    if (!remote) return { url: null, changed: false }
    await changeRecorded(paths, options, () => removeArchiveRemote(paths), {
      kind: 'archive_remote_removed',
      data: { actor: options.actor, url: remote.url },
    })
    return { url: remote.url, changed: true }
  })
}

async function requireArchive(paths: EmbeddedServerPaths) {
  const config = await readArchiveConfig(paths)
  if (!config) {
    throw new FleetkitError('ARCHIVE_NOT_ENABLED', 'the embedded server does not archive its WAL: nothing to ship', {
      actions: ['fleetkit db archive enable DIR'],
      data: { stateDir: paths.root },
    })
  }
  return config
}

export async function requireRemote(paths: EmbeddedServerPaths): Promise<ArchiveRemote> {
  const remote = await readArchiveRemote(paths)
  if (!remote) {
    throw new FleetkitError('ARCHIVE_REMOTE_NOT_SET', `no off-host archive is recorded in ${paths.root}`, {
      actions: ['fleetkit db archive remote add ssh://USER@HOST/PATH --host-key LINE --identity FILE'],
      data: { stateDir: paths.root },
    })
  }
  return remote
}

export interface ShipResult {
  url: string
  /** The files sent by this run (`wal/NAME`, `base/NAME`), in order. */
  shipped: string[]
  /**
   * @minimum 0
   * @asType integer
   */
  bytes: number
  /**
   * Finished files of the local archive the remote held already with their checksum.
   * @minimum 0
   * @asType integer
   */
  alreadyThere: number
  /** The newest WAL segment on the remote with its checksum (null: none). */
  lastShippedWal: string | null
}

/**
 * `db archive ship`: every finished file of the local archive that the remote has no checksum for,
 * segments in order, then each base backup (its tar, then its manifest). What happened is written to
 * archive-ship.json, a failure too, before the error goes up.
 */
export async function shipArchive(options: {
  stateDir: string
  env: Env
  /** The gateway unit's environment file, shipped in the kit (kit/gateway.env) when it can be. */
  gatewayEnvFile: string
  now: () => Date
  openRemote: OpenRemoteArchive
  progress: (message: string) => void
}): Promise<ShipResult> {
  requireEmbedded(options.env)
  const paths = embeddedServerPaths(options.stateDir)
  const config = await requireArchive(paths)
  const remote = await requireRemote(paths)
  return withArchiveShipLock(paths, async () => {
    const attemptAt = options.now().toISOString()
    const before = await readShipStatus(paths)
    try {
      const pkiDir = resolvePkiDir({ ...options.env, FLEETKIT_STATE_DIR: options.stateDir })
      const result = await shipLocked(archiveLayout(config.dir), remote, { ...options, paths, pkiDir })
      await writeShipStatus(paths, {
        lastShippedWal: result.lastShippedWal,
        lastSuccessAt: attemptAt,
        lastAttemptAt: attemptAt,
        lastError: null,
      })
      return result
    } catch (error) {
      const coded = error instanceof FleetkitError
      await writeShipStatus(paths, {
        lastShippedWal: before?.lastShippedWal ?? null,
        lastSuccessAt: before?.lastSuccessAt ?? null,
        lastAttemptAt: attemptAt,
        lastError: {
          code: coded ? error.code : 'INTERNAL_ERROR',
          message: (error as Error).message.slice(0, 500),
        },
      })
      throw error
    }
  })
}

async function shipLocked(
  layout: ReturnType<typeof archiveLayout>,
  remote: ArchiveRemote,
  options: {
    openRemote: OpenRemoteArchive
    progress: (message: string) => void
    now: () => Date
    stateDir: string
    paths: EmbeddedServerPaths
    pkiDir: string
    gatewayEnvFile: string
  },
): Promise<ShipResult> {
  const systemIdentifier = await readSystemIdentifier(options.paths.dataDir)
  const files = await options.openRemote(remote)
  try {
    await files.mkdirs('wal')
    await files.mkdirs('base')
    await claimRemoteForCluster(files, remote, systemIdentifier, options.now())
    const remoteWal = new Set(await files.list('wal'))
    const remoteBase = new Set(await files.list('base'))
    const localWal = (await readdir(layout.walDir).catch(() => [] as string[])).filter(isFinishedWalFile).sort()
    const todo: { local: string; path: string }[] = []
    for (const name of localWal)
      if (!remoteWal.has(`${name}.sha256`)) todo.push({ local: join(layout.walDir, name), path: `wal/${name}` })
    for (const b of await listBaseBackups(layout)) {
      // The manifest after its tar, as locally: a remote backup without one is never chosen.
      for (const name of [b.file, `${b.label}.json`])
        if (!remoteBase.has(`${name}.sha256`)) todo.push({ local: join(layout.baseDir, name), path: `base/${name}` })
    }
    const result: ShipResult = {
      url: remote.url,
      shipped: [],
      bytes: 0,
      alreadyThere: localWal.length - todo.filter((t) => t.path.startsWith('wal/')).length,
      lastShippedWal: null,
    }
    for (const [i, item] of todo.entries()) {
      options.progress(`Shipping ${item.path} (${i + 1}/${todo.length})`)
      const sent = await shipFile(files, item.local, item.path, remote)
      if (sent === undefined) continue
      result.shipped.push(item.path)
      result.bytes += sent
      if (item.path.startsWith('wal/')) remoteWal.add(`${item.path.slice(4)}.sha256`)
    }
    // Last: the archive's own files matter most, and a kit file is small.
    const kit = await shipKit(
      files,
      {
        paths: options.paths,
        pkiDir: options.pkiDir,
        releasesDir: releasesDirOf(options.stateDir),
        gatewayEnvFile: options.gatewayEnvFile,
      },
      remote,
      options.progress,
    )
    result.shipped.push(...kit.shipped)
    result.bytes += kit.bytes
    const segments = [...remoteWal]
      .filter((n) => n.endsWith('.sha256'))
      .map((n) => n.slice(0, -'.sha256'.length))
      .filter((n) => segmentOf(n) !== undefined)
      .sort((a, b) => segmentOf(a)!.position.localeCompare(segmentOf(b)!.position) || a.localeCompare(b))
    result.lastShippedWal = segments.at(-1) ?? null
    return result
  } finally {
    files.close()
  }
}
