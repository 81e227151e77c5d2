// Builds a release directory from built agent binaries: one deterministic
// fleetkit-agent-<version>-linux-<arch>.tar.zst per architecture and their SHA256SUMS.
import { lstat, readFile } from 'node:fs/promises'
import { join } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'
import {
  AGENT_ENTRY_NAME,
  RELEASE_ARCHITECTURES,
  type ReleaseArchitecture,
  SIGNATURE_FILE,
  SUMS_FILE,
  archiveName,
  assertReleaseVersion,
} from './release-name.js'
import { formatSha256Sums, sha256Hex } from './sha256sums.js'
import { singleFileTar } from './tar-writer.js'
import { zstdCompress } from './zstd.js'
import { makeDirectories } from '../fs/make-directories.js'
import { type NewFile, removeDurably, writeFilesAtomic } from '../fs/atomic-file.js'

/** Every archive has the same mtime (the epoch), so the bytes depend on the binary alone. */
const RELEASE_ENTRY_MTIME = 0
const RELEASE_ENTRY_MODE = 0o755
/** The files are uploaded and served: anyone may read them. */
const RELEASE_FILE_MODE = 0o644

export interface PackOptions {
  version: string
  /** Holds linux-<arch>/fleetkit-agent for each architecture to ship. */
  inputDir: string
  /** The version directory to write (uploaded as <release.url>/<version>/). */
  outputDir: string
  /** Told when a step begins (for a progress line): compressing is the slow one. */
  progress?: (message: string) => void
}

interface PackedArchive {
  arch: ReleaseArchitecture
  /** @pattern ^fleetkit-agent-[0-9A-Za-z.-]+-linux-(amd64|arm64)\.tar\.zst$ */
  name: string
  /** @pattern ^[0-9a-f]{64}$ */
  sha256: string
  /**
   * @minimum 1
   * @asType integer
   */
  size: number
  /**
   * @minimum 0
   * @asType integer
   */
  binarySize: number
}

export interface PackResult {
  /**
   * @pattern ^[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z][0-9A-Za-z.-]*)?$
   * @maxLength 64
   */
  version: string
  /** @minLength 1 */
  outputDir: string
  /** @pattern SHA256SUMS$ */
  sumsFile: string
  /**
   * @maxItems 2
   * @minItems 1
   */
  archives: PackedArchive[]
}

function agentInputPath(inputDir: string, arch: ReleaseArchitecture): string {
  return join(inputDir, `linux-${arch}`, AGENT_ENTRY_NAME)
}

async function readAgentBinary(path: string): Promise<Buffer | undefined> {
  let info
  try {
    info = await lstat(path)
  } catch {
    return undefined
  }
  if (!info.isFile())
    throw new FleetkitError(
      'RELEASE_INPUT_INVALID',
      `${path} is not a regular file (links and directories are not packed)`,
    )
  return readFile(path)
}

export async function packRelease(options: PackOptions): Promise<PackResult> {
  const version = assertReleaseVersion(options.version)
  const progress = options.progress ?? (() => {})
  progress(`reading the agent binaries in ${options.inputDir}`)
  const binaries: { arch: ReleaseArchitecture; content: Buffer }[] = []
  for (const arch of RELEASE_ARCHITECTURES) {
    const content = await readAgentBinary(agentInputPath(options.inputDir, arch))
    if (content !== undefined) binaries.push({ arch, content })
  }
  if (binaries.length === 0) {
    const expected = RELEASE_ARCHITECTURES.map((arch) => agentInputPath(options.inputDir, arch))
    throw new FleetkitError(
      'RELEASE_INPUT_INVALID',
      `no agent binary in ${options.inputDir}: expected ${expected.join(' or ')}`,
      { data: { expected } },
    )
  }
  await makeDirectories(options.outputDir)
  const archives: PackedArchive[] = []
  const files: NewFile[] = []
  for (const { arch, content } of binaries) {
    const name = archiveName(version, arch)
    progress(`compressing ${name} (${(content.length / 1024 / 1024).toFixed(1)} MiB) with zstd`)
    const tar = singleFileTar({ name: AGENT_ENTRY_NAME, mode: RELEASE_ENTRY_MODE, mtime: RELEASE_ENTRY_MTIME, content })
    const archive = await zstdCompress(tar)
    files.push({ name, content: archive, mode: RELEASE_FILE_MODE })
    archives.push({ arch, name, sha256: sha256Hex(archive), size: archive.length, binarySize: content.length })
  }
  const sumsFile = join(options.outputDir, SUMS_FILE)
  files.push({ name: SUMS_FILE, content: formatSha256Sums(archives), mode: RELEASE_FILE_MODE })
  progress(`writing the archives and ${SUMS_FILE}`)
  // Every file to a temp name first: a failure (a full disk) leaves the directory as it was, a
  // release signed before still whole. Once all are written, and before any is renamed over an old
  // one, the signature of the earlier sums goes: it would not match, and a directory uploaded as it
  // is must read "unsigned", never "tampered with".
  await writeFilesAtomic(options.outputDir, files, undefined, () =>
    removeDurably(join(options.outputDir, SIGNATURE_FILE)),
  )
  return { version, outputDir: options.outputDir, sumsFile, archives }
}
