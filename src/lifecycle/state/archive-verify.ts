// `fleetkit db archive verify [--remote] [--restore]`: is the archive one a restore can use? Every file
// with a checksum is read in full and compared (on the remote, the `.sha256` each shipped file has; base
// backups against their manifest), and the WAL from the newest whole base backup's start must run without a
// gap to the newest segment. With --restore the proof is a real one: the newest base backup and that WAL
// are fetched (each checked again) into a scratch directory, a scratch server replays all of it, and the
// last record it replayed must lie in the newest segment.
import { chmod, chown, copyFile, mkdir, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { Env } from '../../config/state-dir.js'
import { resolvePkiDir } from '../../pki/pki-dir.js'
import {
  type ArchiveLayout,
  checkArchiveDir,
  prepareArchiveDir,
  readArchiveConfig,
  requireEmbedded,
  withArchiveShipLock,
} from '../../store/embedded/archive-dir.js'
import { walPositionOf } from '../../store/embedded/archive-prune.js'
import { type BaseBackupManifest, fileSha256 } from '../../store/embedded/base-backup.js'
import { embeddedServerPaths } from '../../store/embedded/paths.js'
import { restoreToTime } from '../../store/embedded/point-in-time.js'
import { stopEmbeddedServer } from '../../store/embedded/server.js'
import { isFinishedWalFile, segmentOf, walChain, type WalChain } from '../../store/embedded/wal-chain.js'
import { postgresRunAs, type UnixIds } from '../../store/postgres-binaries.js'
import {
  type ArchiveRemote,
  checkIdentityFile,
  parseHostKey,
  parseRemoteUrl,
} from '../../store/embedded/archive-remote.js'
import { fetchKit, requireEmptyKitTarget } from './archive-kit.js'
import { requireRemote } from './archive-ship.js'
import { type OpenRemoteArchive, parseChecksumLine, type RemoteArchiveFiles } from './remote-files.js'

/** What verify reads: the local archive directory or the remote one, by paths relative to it. */
type ArchiveReader = Pick<RemoteArchiveFiles, 'list' | 'sha256' | 'readText' | 'get'>

function localReader(dir: string): ArchiveReader {
  return {
    list: (sub) => readdir(join(dir, sub)).catch(() => [] as string[]),
    sha256: (path) => fileSha256(join(dir, path)),
    readText: (path) => readFile(join(dir, path), 'utf8'),
    get: (path, localPath) => copyFile(join(dir, path), localPath),
  }
}

export interface ArchiveVerifyResult {
  source: 'local' | 'remote'
  /** The directory, or the remote's URL. */
  location: string
  /**
   * Files whose SHA-256 was read and compared.
   * @minimum 0
   * @asType integer
   */
  checkedFiles: number
  /** Files whose bytes differ from their checksum (or are gone, or whose checksum file is not one). */
  damaged: { file: string; why: string }[]
  /** The newest base backup whose file is whole: where a restore starts (null: none). */
  baseBackup: string | null
  /** The WAL from that base backup's start segment to the newest one. */
  wal: (WalChain & { start: string }) | null
  /** The restore into a scratch directory (--restore); null when not asked for or not attempted. */
  restore: {
    baseBackup: string
    /** The LSN of the last record the scratch server replayed. */
    replayedLsn: string | null
    /** The newest segment it replayed into. */
    reachedWal: string | null
    recoveredTo: string | null
  } | null
}

/** What a verify reads and decides, given a reader: checksums, the newest whole base backup, the chain. */
async function inspect(
  reader: ArchiveReader,
  source: 'local' | 'remote',
  progress: (message: string) => void,
): Promise<{ result: ArchiveVerifyResult; base: BaseBackupManifest | null; wal: string[]; sums: Map<string, string> }> {
  const walNames = await reader.list('wal')
  const baseNames = await reader.list('base')
  const damaged: ArchiveVerifyResult['damaged'] = []
  let checkedFiles = 0
  const good = new Set<string>()
  const sums = new Map<string, string>()
  // Remote: a file counts once shipped (its .sha256 there); local WAL has no checksum, only its name.
  const checksummed = (names: string[], sub: string) =>
    names.filter((n) => n.endsWith('.sha256')).map((n) => `${sub}/${n.slice(0, -'.sha256'.length)}`)
  if (source === 'remote') {
    // The kit (the password, the PKI files) is read back too: a new control host needs it whole.
    const kit = [
      ...checksummed(await reader.list('kit'), 'kit'),
      ...checksummed(await reader.list('kit/pki'), 'kit/pki'),
    ]
    const files = [...checksummed(walNames, 'wal'), ...checksummed(baseNames, 'base'), ...kit]
    for (const [i, file] of files.entries()) {
      if (i % 20 === 0) progress(`Reading back ${file} and the rest (${i + 1}/${files.length})`)
      const expected = parseChecksumLine(await reader.readText(`${file}.sha256`).catch(() => ''))
      if (!expected) {
        damaged.push({ file, why: 'its .sha256 file is not a sha256sum line' })
        continue
      }
      const actual = await reader.sha256(file).catch(() => undefined)
      checkedFiles++
      if (actual === undefined) damaged.push({ file, why: 'missing (its checksum is there)' })
      else if (actual !== expected)
        damaged.push({ file, why: `SHA-256 ${actual.slice(0, 12)}…, expected ${expected.slice(0, 12)}…` })
      else {
        good.add(file)
        sums.set(file, actual)
      }
    }
  } else {
    for (const name of walNames.filter(isFinishedWalFile)) good.add(`wal/${name}`)
    for (const name of baseNames) good.add(`base/${name}`)
  }
  const wal = [...good].filter((f) => f.startsWith('wal/')).map((f) => f.slice(4))
  // The base backups whose manifest counts, newest first: the first whose tar matches it is the one.
  const manifests: BaseBackupManifest[] = []
  for (const file of [...good].filter((f) => /^base\/.*\.json$/.test(f))) {
    try {
      const m = JSON.parse(await reader.readText(file)) as BaseBackupManifest
      if (
        m.format === 'fleetkit-base-backup-1' &&
        typeof m.file === 'string' &&
        /^[A-Za-z0-9._-]+\.tar\.gz$/.test(m.file)
      )
        manifests.push(m)
    } catch {
      damaged.push({ file, why: 'not a base backup manifest' })
    }
  }
  manifests.sort((a, b) => b.stoppedAt.localeCompare(a.stoppedAt))
  let base: BaseBackupManifest | null = null
  for (const m of manifests) {
    const tar = `base/${m.file}`
    progress(`Checking base backup ${m.label} against its manifest`)
    const sha = await reader.sha256(tar).catch(() => undefined)
    if (source === 'local') checkedFiles++
    if (sha === m.sha256 && good.has(tar)) {
      sums.set(tar, sha)
      base = m
      break
    }
    damaged.push({
      file: tar,
      why: sha === undefined ? 'missing (its manifest is there)' : 'differs from its manifest',
    })
  }
  const chain = base
    ? { ...walChain(wal, walPositionOf(base.startLsn), base.timeline), start: walPositionOf(base.startLsn) }
    : null
  return {
    result: { source, location: '', checkedFiles, damaged, baseBackup: base?.label ?? null, wal: chain, restore: null },
    base,
    wal,
    sums,
  }
}

function verifyFailed(result: ArchiveVerifyResult, why: string): FleetkitError {
  return new FleetkitError('ARCHIVE_VERIFY_FAILED', `${result.location}: ${why}`, {
    actions: [
      result.source === 'remote'
        ? 'fleetkit db archive ship (sends again what is missing or damaged locally)'
        : 'fleetkit db archive base-backup',
      'fleetkit db archive verify --json (lists each damaged file and missing segment)',
    ],
    data: { damaged: result.damaged, missingWal: result.wal?.missing ?? [], baseBackup: result.baseBackup },
  })
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
  const inspected = await inspect(reader, source, options.progress)
  const { base } = inspected
  const result = { ...inspected.result, location }
  if (result.damaged.length > 0)
    throw verifyFailed(
      result,
      `${result.damaged.length} damaged file(s), the first ${result.damaged[0]!.file}: ${result.damaged[0]!.why}`,
    )
  if (!base || !result.wal) throw verifyFailed(result, 'no whole base backup: a restore has nowhere to start')
  if (result.wal.missingCount > 0)
    throw verifyFailed(
      result,
      `${result.wal.missingCount} WAL segment(s) missing after base backup ${base.label}, the first at position ${result.wal.missing[0]}`,
    )
  if (options.restore) result.restore = await scratchRestore(reader, restorableOf(inspected), options)
  return result
}

/** A whole base backup and the WAL a restore from it replays: what inspect() found good. */
interface Restorable {
  base: BaseBackupManifest
  wal: string[]
  sums: Map<string, string>
  chain: WalChain & { start: string }
}

/**
 * Fetches the base backup and every segment from its start (and the timeline histories) into `layout`,
 * each compared with the checksum verify read; the WAL owned by `runAs`, whose restore_command reads it.
 */
async function fetchRestorable(
  reader: ArchiveReader,
  picked: Restorable,
  layout: ArchiveLayout,
  runAs: UnixIds | undefined,
  progress: (message: string) => void,
): Promise<number> {
  const { base, chain, sums } = picked
  const needed = picked.wal.filter((n) => {
    const seg = segmentOf(n)
    return n.endsWith('.history') || (seg !== undefined && seg.position >= chain.start && seg.timeline >= base.timeline)
  })
  const files = [`base/${base.file}`, `base/${base.label}.json`, ...needed.map((n) => `wal/${n}`)]
  for (const [i, file] of files.entries()) {
    if (i % 20 === 0) progress(`Fetching ${file} and the rest (${i + 1}/${files.length})`)
    const local = join(layout.dir, file)
    await reader.get(file, `${local}.part`)
    // What arrived is what was checked: a file changed or cut short on the way fails here.
    const want = sums.get(file)
    if (want !== undefined && (await fileSha256(`${local}.part`)) !== want) {
      throw new FleetkitError('ARCHIVE_VERIFY_FAILED', `${file} changed while it was fetched`, {
        actions: ['fleetkit db archive verify --remote --json'],
        data: { damaged: [{ file, why: 'changed while fetched' }] },
      })
    }
    if (runAs && file.startsWith('wal/')) await chown(`${local}.part`, runAs.uid, runAs.gid)
    await rename(`${local}.part`, local)
  }
  return files.length
}

function restorableOf(inspected: Awaited<ReturnType<typeof inspect>>): Restorable {
  return { base: inspected.base!, wal: inspected.wal, sums: inspected.sums, chain: inspected.result.wal! }
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
    await mkdir(scratchPaths.root, { recursive: true, mode: 0o700 })
    // As whom the scratch server will run (restoreToTime asks the same): it reads wal/ with restore_command.
    const runAs = await postgresRunAs({ root: scratchPaths.root })
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

export interface ArchiveFetchResult {
  url: string
  dir: string
  baseBackup: string
  /** The newest segment fetched: a restore with --to latest replays up to it. */
  newestWal: string | null
  /**
   * @minimum 0
   * @asType integer
   */
  files: number
  /** Where the embedded server's password from kit/password went. */
  passwordFile: string
  /** The PKI directory the kit's files went into. */
  pkiDir: string
  /**
   * @minimum 0
   * @asType integer
   */
  pkiFiles: number
}

/**
 * `db archive fetch URL DIR` on a machine replacing the control host: the off-host archive is verified as
 * `verify --remote` does (a damaged file or a gap refuses, nothing fetched), then its newest base backup
 * and the WAL after it are fetched into DIR, an archive `db restore --to latest --archive DIR` reads.
 */
export async function fetchRemoteArchive(options: {
  stateDir: string
  env: Env
  url: string
  hostKeyLine: string
  identityFile: string
  dir: string
  now: () => Date
  openRemote: OpenRemoteArchive
  progress: (message: string) => void
}): Promise<ArchiveFetchResult> {
  requireEmbedded(options.env)
  const where = parseRemoteUrl(options.url)
  const remote: ArchiveRemote = {
    ...where,
    hostKey: parseHostKey(options.hostKeyLine, where.host, where.port),
    identityFile: await checkIdentityFile(options.identityFile),
    addedAt: options.now().toISOString(),
  }
  const dir = checkArchiveDir(options.dir)
  const paths = embeddedServerPaths(options.stateDir)
  const pkiDir = resolvePkiDir({ ...options.env, FLEETKIT_STATE_DIR: options.stateDir })
  await requireEmptyKitTarget(paths, pkiDir)
  const held = [
    ...(await readdir(join(dir, 'wal')).catch(() => [] as string[])),
    ...(await readdir(join(dir, 'base')).catch(() => [] as string[])),
  ]
  if (held.length > 0) {
    throw new FleetkitError('ARCHIVE_DIR_INVALID', `${dir} holds an archive already: fetch into an empty directory`, {
      actions: ['fleetkit db archive fetch URL /var/backups/fleetkit-restore (a new directory)'],
      data: { dir },
    })
  }
  const files = await options.openRemote(remote)
  try {
    const inspected = await inspect(files, 'remote', options.progress)
    const result = { ...inspected.result, location: remote.url }
    if (result.damaged.length > 0 || !inspected.base || !result.wal || result.wal.missingCount > 0)
      throw verifyFailed(
        result,
        'the off-host archive cannot restore whole: fleetkit db archive verify --remote says why',
      )
    const runAs = await postgresRunAs({ root: paths.root })
    const layout = await prepareArchiveDir(dir, runAs)
    const count = await fetchRestorable(files, restorableOf(inspected), layout, runAs, options.progress)
    const kit = await fetchKit(files, paths, pkiDir, options.progress)
    return {
      url: remote.url,
      dir,
      baseBackup: inspected.base.label,
      newestWal: result.wal.newest,
      files: count,
      passwordFile: paths.passwordFile,
      pkiDir,
      pkiFiles: kit.pkiFiles,
    }
  } finally {
    files.close()
  }
}
