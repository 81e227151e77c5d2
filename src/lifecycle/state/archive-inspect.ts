// What `db archive verify` and `db archive fetch` read of an archive, local or off-host: every file with a
// checksum read in full and compared (on the remote, the `.sha256` each shipped file has; base backups
// against their manifest), the newest whole base backup, and whether the WAL from its start segment runs
// without a gap to the newest one; and the fetch of that base backup and WAL, each file checked again.
import { chown, copyFile, readdir, readFile, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { isReleaseVersion } from '../../release/release-name.js'
import type { ArchiveLayout } from '../../store/embedded/archive-dir.js'
import { walPositionOf } from '../../store/embedded/archive-prune.js'
import { type BaseBackupManifest, fileSha256 } from '../../store/embedded/base-backup.js'
import { isFinishedWalFile, segmentOf, walChain, type WalChain } from '../../store/embedded/wal-chain.js'
import type { UnixIds } from '../../store/postgres-binaries.js'
import { parseChecksumLine, type RemoteArchiveFiles } from './remote-files.js'

/** What verify reads: the local archive directory or the remote one, by paths relative to it. */
export type ArchiveReader = Pick<RemoteArchiveFiles, 'list' | 'sha256' | 'readText' | 'get'>

export function localReader(dir: string): ArchiveReader {
  return {
    list: (sub) => readdir(join(dir, sub)).catch(() => [] as string[]),
    sha256: (path) => fileSha256(join(dir, path)),
    readText: (path) => readFile(join(dir, path), 'utf8'),
    get: (path, localPath) => copyFile(join(dir, path), localPath),
  }
}

/** What inspect() found in an archive: checksums compared, the newest whole base backup, the WAL after it. */
export interface ArchiveInspection {
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
}

/** A whole base backup and the WAL a restore from it replays: what inspectArchive() found good. */
export interface Restorable {
  base: BaseBackupManifest
  wal: string[]
  sums: Map<string, string>
  chain: WalChain & { start: string }
}

/**
 * Fetches the base backup and every segment from its start (and the timeline histories) into `layout`,
 * each compared with the checksum verify read; the WAL owned by `runAs`, whose restore_command reads it.
 */
export async function fetchRestorable(
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
  const written: string[] = []
  try {
    for (const [i, file] of files.entries()) {
      if (i % 20 === 0) progress(`Fetching ${file} and the rest (${i + 1}/${files.length})`)
      const local = join(layout.dir, file)
      written.push(`${local}.part`)
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
      written.push(local)
    }
  } catch (error) {
    // The directory held no archive before (fetch checks it): what this fetch wrote goes, so the same
    // fetch can run again once the cause (a full disk) is gone, instead of finding DIR "holds an archive".
    for (const path of written) await rm(path, { force: true }).catch(() => undefined)
    throw error
  }
  return files.length
}

export interface Inspected {
  result: ArchiveInspection
  restorable: Restorable | null
}

/** What verify and fetch read and decide, given a reader: checksums, the newest whole base backup, the chain. */
export async function inspectArchive(
  reader: ArchiveReader,
  source: 'local' | 'remote',
  location: string,
  progress: (message: string) => void,
): Promise<Inspected> {
  const walNames = await reader.list('wal')
  const baseNames = await reader.list('base')
  const damaged: ArchiveInspection['damaged'] = []
  let checkedFiles = 0
  const good = new Set<string>()
  const sums = new Map<string, string>()
  // Remote: a file counts once shipped (its .sha256 there); local WAL has no checksum, only its name.
  const checksummed = (names: string[], sub: string) =>
    names.filter((n) => n.endsWith('.sha256')).map((n) => `${sub}/${n.slice(0, -'.sha256'.length)}`)
  if (source === 'remote') {
    // The kit (the password, the PKI files, the releases) is read back too: a new control host needs it whole.
    const kit = [
      ...checksummed(await reader.list('kit'), 'kit'),
      ...checksummed(await reader.list('kit/pki'), 'kit/pki'),
    ]
    for (const version of (await reader.list('kit/releases')).filter(isReleaseVersion).sort())
      kit.push(...checksummed(await reader.list(`kit/releases/${version}`), `kit/releases/${version}`))
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
    // On the remote the tar was read back already (its .sha256); locally it is read now.
    const sha = sums.get(tar) ?? (source === 'local' ? await reader.sha256(tar).catch(() => undefined) : undefined)
    if (source === 'local') checkedFiles++
    if (sha === m.sha256 && good.has(tar)) {
      sums.set(tar, sha)
      base = m
      break
    }
    if (!damaged.some((d) => d.file === tar))
      damaged.push({
        file: tar,
        why:
          sha === undefined ? 'missing or without its checksum (its manifest is there)' : 'differs from its manifest',
      })
  }
  const chain = base
    ? { ...walChain(wal, walPositionOf(base.startLsn), base.timeline), start: walPositionOf(base.startLsn) }
    : null
  return {
    result: { source, location, checkedFiles, damaged, baseBackup: base?.label ?? null, wal: chain },
    restorable: base && chain ? { base, wal, sums, chain } : null,
  }
}

function inspectionFailed(result: ArchiveInspection, why: string): FleetkitError {
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

/** The inspection's verdict: a damaged file, no whole base backup or a gap is ARCHIVE_VERIFY_FAILED. */
export function requireRestorable(inspected: Inspected): Restorable {
  const { result, restorable } = inspected
  if (result.damaged.length > 0)
    throw inspectionFailed(
      result,
      `${result.damaged.length} damaged file(s), the first ${result.damaged[0]!.file}: ${result.damaged[0]!.why}`,
    )
  if (!restorable) throw inspectionFailed(result, 'no whole base backup: a restore has nowhere to start')
  if (restorable.chain.missingCount > 0)
    throw inspectionFailed(
      result,
      `${restorable.chain.missingCount} WAL segment(s) missing after base backup ${restorable.base.label}, the first at position ${restorable.chain.missing[0]}`,
    )
  return restorable
}
