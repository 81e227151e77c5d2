// `fleetkit release publish`: puts a packed, signed release (what `release pack` and `release sign` wrote)
// into <state dir>/releases/<version>/, which the gateway serves on its enrollment listener. The release is
// verified as a host verifies it, against the definition's release.publicKey, before anything is written;
// the very bytes verified are written, to a temporary directory renamed into place, so a crash never
// leaves part of a release where the gateway serves it.
import { lstat, mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises'
import { join, resolve } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { type Rng, systemRng } from '../config/rng.js'
import { releaseUrlOnGateway } from '../definition/gateway-urls.js'
import type { Definition } from '../definition/types.js'
import { createFileExclusive, syncDirectory } from '../fs/atomic-file.js'
import { type FileLockOptions, LockTimeoutError, withFileLock } from '../fs/file-lock.js'
import { publicKeyFromRaw } from './ed25519-keys.js'
import {
  RELEASE_ARCHITECTURES,
  type ReleaseArchitecture,
  SIGNATURE_FILE,
  SUMS_FILE,
  archiveName,
  assertReleaseVersion,
} from './release-name.js'
import { readReleaseFile } from './release-source.js'
import { releasesDirOf } from './releases-dir.js'
import { parseSha256Sums, sha256Hex } from './sha256sums.js'
import {
  DEFAULT_MAX_ARCHIVE_BYTES,
  MAX_SIGNATURE_BYTES,
  MAX_SUMS_BYTES,
  verifyRelease,
  verifySignature,
} from './verify-release.js'

/** The lock beside the published versions: one publish at a time changes releases/. */
const LOCK_FILE = '.publish.lock'
/** What a publish leaves only when it crashed: a version being written, or one being replaced. */
const LEFTOVER = /^\..+\.[0-9a-f]{12}\.(?:tmp|old)$/
const FILE_MODE = 0o644
const DIR_MODE = 0o755

export interface PublishOptions {
  /** The version directory `release pack` and `release sign` wrote. */
  dir: string
  version: string
  /** The state directory of the gateway that serves the release; it must exist. */
  stateDir: string
  /** The fleet definition: release.publicKey verifies the release, release.url and gateway say where hosts fetch it. */
  definition: Pick<Definition, 'release' | 'gateway'>
  /** Put other bytes in place of a version already published with different ones. */
  replace: boolean
  /** Told when a step begins (for a progress line). */
  progress?: (message: string) => void
  /** Tests: the lock's wait. */
  lock?: FileLockOptions
  rng?: Rng
}

interface PublishedFile {
  /** @pattern ^(SHA256SUMS|SHA256SUMS\.sig|fleetkit-agent-[0-9A-Za-z.-]+-linux-(amd64|arm64)\.tar\.zst)$ */
  name: string
  /** @pattern ^[0-9a-f]{64}$ */
  sha256: string
  /**
   * @minimum 0
   * @asType integer
   */
  size: number
}

export interface PublishResult {
  /**
   * @pattern ^[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z][0-9A-Za-z.-]*)?$
   * @maxLength 64
   */
  version: string
  /** `published`: new; `unchanged`: these bytes were published already (nothing written); `replaced`: --replace put them in place of others. */
  status: 'published' | 'unchanged' | 'replaced'
  /**
   * The version directory read.
   * @pattern ^/
   */
  source: string
  /**
   * Where the release is now: <state dir>/releases/<version>.
   * @pattern ^/
   */
  dir: string
  /**
   * SHA256SUMS, SHA256SUMS.sig and the archives the signed sums list, as published.
   * @minItems 3
   * @maxItems 4
   */
  files: PublishedFile[]
  architectures: ReleaseArchitecture[]
  /**
   * The key the signature was verified with: the definition's release.publicKey.
   * @pattern ^[A-Za-z0-9+/]{43}=$
   */
  publicKey: string
  /**
   * Where hosts fetch it: <release.url>/<version>/.
   * @pattern ^https://
   */
  url: string
  /** release.url is an enrollment listener of the definition's gateway (gateway.enrollUrl or a replica's), which serves this directory. */
  servedByGateway: boolean
}

/** The architectures the signed sums list, each an archive of exactly this version; anything else is refused. */
function listedArchitectures(sums: Buffer, version: string, source: string): ReleaseArchitecture[] {
  const parsed = parseSha256Sums(sums.toString('utf8'))
  if (parsed.lines.length === 0 || parsed.malformed > 0) {
    throw new FleetkitError('RELEASE_INPUT_INVALID', `${join(source, SUMS_FILE)} is not in sha256sum format`, {
      actions: [`fleetkit release pack --version ${version} --input DIST --output ${source}`],
      data: { lines: parsed.lines.length, malformed: parsed.malformed },
    })
  }
  const architectures = new Set<ReleaseArchitecture>()
  for (const { name } of parsed.lines) {
    const arch = RELEASE_ARCHITECTURES.find((a) => archiveName(version, a) === name)
    if (arch !== undefined) {
      architectures.add(arch)
      continue
    }
    const other = /^fleetkit-agent-(.+)-linux-(?:amd64|arm64)\.tar\.zst$/.exec(name)
    if (other)
      throw new FleetkitError(
        'RELEASE_VERSION_MISMATCH',
        `the signed ${SUMS_FILE} lists ${name}, an archive of release ${other[1]}, not of ${version}`,
        { data: { expected: version, actual: other[1] } },
      )
    throw new FleetkitError(
      'RELEASE_INPUT_INVALID',
      `the signed ${SUMS_FILE} lists ${JSON.stringify(name.slice(0, 200))}, which is not an archive of release ${version}; a release holds only fleetkit-agent-${version}-linux-<amd64|arm64>.tar.zst`,
      { data: { name: name.slice(0, 200) } },
    )
  }
  return RELEASE_ARCHITECTURES.filter((arch) => architectures.has(arch))
}

/** The state directory must be there: a missing one is most likely not the gateway's (another user, machine or --state-dir). */
async function assertStateDir(stateDir: string): Promise<void> {
  const problem = await stat(stateDir).then(
    (info) => (info.isDirectory() ? undefined : 'is not a directory'),
    (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? 'does not exist' : `cannot be read (${error.code})`),
  )
  if (problem === undefined) return
  throw new FleetkitError(
    'STATE_DIR_UNUSABLE',
    `the state directory ${stateDir} ${problem}; the gateway serves releases from <its state directory>/releases`,
    {
      actions: [
        "run it where the gateway runs, as the gateway's user, with the gateway's FLEETKIT_STATE_DIR or --state-dir",
        `or create it first: mkdir -p -m 0700 ${stateDir}`,
      ],
      data: { path: stateDir },
    },
  )
}

/** What is published at `dir` now, compared with `files`: absent, the same bytes, or other ones (the names that differ). */
async function comparePublished(
  dir: string,
  files: ReadonlyMap<string, Buffer>,
): Promise<{ state: 'absent' } | { state: 'same' } | { state: 'different'; differing: string[] }> {
  const info = await lstat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined
    throw error
  })
  if (info === undefined) return { state: 'absent' }
  if (!info.isDirectory()) return { state: 'different', differing: [...files.keys()] }
  const present = new Set(await readdir(dir))
  const differing: string[] = []
  for (const [name, bytes] of files) {
    present.delete(name)
    const published = await readFile(join(dir, name)).catch(() => undefined)
    if (published === undefined || !published.equals(bytes)) differing.push(name)
  }
  // A file the new release does not have (an architecture it dropped) is a difference too.
  differing.push(...present)
  return differing.length === 0 ? { state: 'same' } : { state: 'different', differing: differing.sort() }
}

/** Writes every file into a new hidden directory beside the target (each fsynced, then the directory). */
async function writeStagedRelease(releases: string, version: string, files: ReadonlyMap<string, Buffer>, rng: Rng) {
  const staged = join(releases, `.${version}.${rng(6).toString('hex')}.tmp`)
  await mkdir(staged, { mode: DIR_MODE })
  try {
    for (const [name, bytes] of files) await createFileExclusive(join(staged, name), bytes, FILE_MODE)
    await syncDirectory(staged)
  } catch (error) {
    await rm(staged, { recursive: true, force: true })
    throw error
  }
  return staged
}

/** Removes what a crashed publish left (never served: the gateway serves version names only). Under the lock. */
async function removeLeftovers(releases: string): Promise<void> {
  for (const name of await readdir(releases)) {
    if (LEFTOVER.test(name)) await rm(join(releases, name), { recursive: true, force: true })
  }
}

function alreadyPublished(version: string, target: string, differing: string[], source: string): FleetkitError {
  return new FleetkitError(
    'RELEASE_ALREADY_PUBLISHED',
    `release ${version} is already published in ${target} with other bytes (${differing.join(', ')}); a version is never changed silently: hosts that installed it would not notice`,
    {
      actions: [
        'publish the new build under a new version: fleetkit release pack --version NEW ...',
        `or replace it on purpose: fleetkit release publish --dir ${source} --version ${version} --replace`,
      ],
      data: { version, dir: target, differing },
    },
  )
}

export async function publishRelease(options: PublishOptions): Promise<PublishResult> {
  const version = assertReleaseVersion(options.version)
  const progress = options.progress ?? (() => {})
  const rng = options.rng ?? systemRng
  const source = resolve(options.dir)
  const publicKeyText = options.definition.release.publicKey
  const publicKey = publicKeyFromRaw(publicKeyText)

  await assertStateDir(options.stateDir)
  // 1. Verify, reading each file once: nothing is written before the release proves good.
  progress(`verifying ${source} against release.publicKey`)
  const dirSource = { dir: source }
  const sums = await readReleaseFile(dirSource, version, SUMS_FILE, { maxBytes: MAX_SUMS_BYTES })
  const signature = await readReleaseFile(dirSource, version, SIGNATURE_FILE, { maxBytes: MAX_SIGNATURE_BYTES })
  verifySignature(sums, signature, publicKey)
  const architectures = listedArchitectures(sums, version, source)
  const files = new Map<string, Buffer>([
    [SUMS_FILE, sums],
    [SIGNATURE_FILE, signature],
  ])
  for (const arch of architectures) {
    const name = archiveName(version, arch)
    files.set(name, await readReleaseFile(dirSource, version, name, { maxBytes: DEFAULT_MAX_ARCHIVE_BYTES }))
  }
  // The host verifier's checks on these bytes: signature, signed name, SHA-256, one regular file.
  for (const arch of architectures)
    await verifyRelease({ source: { files, label: source }, version, arch, publicKey: publicKeyText })

  // 2. Write, one publish at a time.
  const releases = releasesDirOf(resolve(options.stateDir))
  try {
    await mkdir(releases, { mode: DIR_MODE })
  } catch (error) {
    const errno = (error as NodeJS.ErrnoException).code
    if (errno !== 'EEXIST')
      throw new FleetkitError('STATE_DIR_UNUSABLE', `cannot create ${releases} (${errno ?? 'error'})`, {
        actions: ["run it as the gateway's user, the owner of the state directory"],
        data: { path: releases, errno },
        cause: error,
      })
  }
  const target = join(releases, version)
  const lockFile = join(releases, LOCK_FILE)
  let status: PublishResult['status']
  try {
    status = await withFileLock(
      lockFile,
      async () => {
        await removeLeftovers(releases)
        const published = await comparePublished(target, files)
        if (published.state === 'same') return 'unchanged'
        if (published.state === 'different' && !options.replace)
          throw alreadyPublished(version, target, published.differing, options.dir)
        progress(`writing ${target}`)
        const staged = await writeStagedRelease(releases, version, files, rng)
        if (published.state === 'absent') {
          await rename(staged, target)
          await syncDirectory(releases)
          return 'published'
        }
        // A directory cannot be renamed over another: the old one moves aside first. In between (and
        // after a crash there) the version is absent, a 404, never a mix of the two releases.
        const old = join(releases, `.${version}.${rng(6).toString('hex')}.old`)
        await rename(target, old)
        await rename(staged, target)
        await syncDirectory(releases)
        await rm(old, { recursive: true, force: true })
        return 'replaced'
      },
      {
        ...options.lock,
        onWait: (holder) => progress(`waiting for another fleetkit release publish (PID ${holder})`),
      },
    )
  } catch (error) {
    // Only its own lock's timeout: one from a lock taken inside is that lock's to report.
    if (!(error instanceof LockTimeoutError) || error.path !== lockFile) throw error
    throw new FleetkitError(
      'RELEASE_PUBLISH_BUSY',
      `another fleetkit release publish${error.holder ? ` (PID ${error.holder})` : ''} holds ${lockFile}; nothing was published`,
      {
        actions: ['wait for it to finish, then run this again', error.removeAction],
        data: { lock: lockFile, ...(error.holder ? { holder: error.holder } : {}) },
      },
    )
  }

  return {
    version,
    status,
    source,
    dir: target,
    files: [...files].map(([name, bytes]) => ({ name, sha256: sha256Hex(bytes), size: bytes.length })),
    architectures,
    publicKey: publicKeyText.trim(),
    url: `${options.definition.release.url.replace(/\/+$/, '')}/${version}/`,
    servedByGateway: releaseUrlOnGateway(options.definition),
  }
}
