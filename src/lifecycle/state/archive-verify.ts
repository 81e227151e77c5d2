// `fleetkit db archive verify [--remote] [--restore]`: is the archive one a restore can use? What is
// read and judged is archive-inspect.ts's (every checksum, the newest whole base backup, no gap in the WAL
// after it). With --restore the proof is a real one: that base backup and WAL are fetched into a scratch
// directory, a scratch server replays all of it, and the last record it replayed must lie in the newest segment.
import { chmod, copyFile, mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { Env } from '../../config/state-dir.js'
import {
  prepareArchiveDir,
  readArchiveConfig,
  requireEmbedded,
  withArchiveShipLock,
} from '../../store/embedded/archive-dir.js'
import { walPositionOf } from '../../store/embedded/archive-prune.js'
import { embeddedServerPaths } from '../../store/embedded/paths.js'
import { restoreToTime } from '../../store/embedded/point-in-time.js'
import { stopEmbeddedServer } from '../../store/embedded/server.js'
import { segmentOf } from '../../store/embedded/wal-chain.js'
import { postgresRunAs } from '../../store/postgres-binaries.js'
import {
  type ArchiveInspection,
  type ArchiveReader,
  fetchRestorable,
  inspectArchive,
  localReader,
  requireRestorable,
  type Restorable,
} from './archive-inspect.js'
import { requireRemote } from './archive-ship.js'
import type { OpenRemoteArchive } from './remote-files.js'
import { makeDirectories } from '../../fs/make-directories.js'

export interface ArchiveVerifyResult extends ArchiveInspection {
  /** The restore into a scratch directory (--restore); null when not asked for. */
  restore: {
    baseBackup: string
    /** The LSN of the last record the scratch server replayed. */
    replayedLsn: string | null
    /** The newest segment it replayed into. */
    reachedWal: string | null
    recoveredTo: string | null
  } | null
}

export async function verifyArchive(options: {
  stateDir: string
  env: Env
  remote: boolean
  restore: boolean
  now: () => Date
  openRemote: OpenRemoteArchive
  progress: (message: string) => void
}): Promise<ArchiveVerifyResult> {
  requireEmbedded(options.env)
  const paths = embeddedServerPaths(options.stateDir)
  if (!options.remote) {
    const config = await readArchiveConfig(paths)
    if (!config) {
      throw new FleetkitError('ARCHIVE_NOT_ENABLED', `no WAL archive is recorded in ${paths.root}`, {
        actions: ['fleetkit db archive enable DIR'],
        data: { stateDir: options.stateDir },
      })
    }
    return verifyWith(localReader(config.dir), 'local', config.dir, options)
  }
  const remote = await requireRemote(paths)
  // Not during a ship: it would see files half renamed.
  return withArchiveShipLock(paths, async () => {
    const files = await options.openRemote(remote)
    try {
      return await verifyWith(files, 'remote', remote.url, options)
    } finally {
      files.close()
    }
  })
}

async function verifyWith(
  reader: ArchiveReader,
  source: 'local' | 'remote',
  location: string,
  options: { stateDir: string; restore: boolean; now: () => Date; progress: (message: string) => void },
): Promise<ArchiveVerifyResult> {
  const inspected = await inspectArchive(reader, source, location, options.progress)
  const restorable = requireRestorable(inspected)
  return {
    ...inspected.result,
    restore: options.restore ? await scratchRestore(reader, restorable, options) : null,
  }
}

/**
 * The newest base backup and the WAL from its start, fetched into `<state>/verify-<time>/archive`,
 * restored into a scratch state directory beside it with archiving off, the replay's end compared with
 * the newest segment; the scratch server stopped and everything removed whatever happens.
 */
async function scratchRestore(
  reader: ArchiveReader,
  picked: Restorable,
  options: { stateDir: string; now: () => Date; progress: (message: string) => void },
): Promise<NonNullable<ArchiveVerifyResult['restore']>> {
  const { base, chain } = picked
  const paths = embeddedServerPaths(options.stateDir)
  const scratch = await mkdtemp(join(options.stateDir, 'verify-'))
  const scratchState = join(scratch, 'state')
  try {
    const scratchPaths = embeddedServerPaths(scratchState)
    await makeDirectories(scratchPaths.root, 0o700)
    // As whom the scratch server will run (restoreToTime asks the same): it reads wal/ with restore_command.
    const runAs = await postgresRunAs({ root: scratchPaths.root, create: true })
    if (runAs) await chmod(scratch, 0o711)
    const layout = await prepareArchiveDir(join(scratch, 'archive'), runAs)
    await fetchRestorable(reader, picked, layout, runAs, options.progress)
    // The backup's roles know only the password's hash: the scratch server is reached with this state's.
    await copyFile(paths.passwordFile, scratchPaths.passwordFile)
    const now = options.now()
    const restored = await restoreToTime({
      stateDir: scratchState,
      target: now,
      toEnd: true,
      archiving: 'off',
      archiveDir: layout.dir,
      now,
      progress: options.progress,
    })
    const reached = restored.replayedLsn ? walPositionOf(restored.replayedLsn) : null
    const newest = chain.newest ? segmentOf(chain.newest)!.position : null
    const restore = {
      baseBackup: restored.baseBackup,
      replayedLsn: restored.replayedLsn,
      reachedWal: reached,
      recoveredTo: restored.recoveredTo,
    }
    if (reached === null || newest === null || reached < newest) {
      throw new FleetkitError(
        'ARCHIVE_VERIFY_FAILED',
        `a restore from ${base.label} replayed to ${restored.replayedLsn ?? 'nothing'}, short of the newest segment ${chain.newest ?? '(none)'}`,
        {
          actions: ['fleetkit db archive verify --json', 'fleetkit db archive base-backup (a new start for restores)'],
          data: { restore, newestWal: chain.newest },
        },
      )
    }
    return restore
  } finally {
    await stopEmbeddedServer(scratchState).catch(() => undefined)
    await rm(scratch, { recursive: true, force: true })
  }
}
