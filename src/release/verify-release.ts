// Checks a release the way a host's verifier does, in the same order: signature over
// SHA256SUMS, the exact archive name in the signed sums, its SHA-256, then what the archive holds.
import type { KeyObject } from 'node:crypto'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { publicKeyFromRaw } from './ed25519-keys.js'
import {
  AGENT_ENTRY_NAME,
  RELEASE_ARCHITECTURES,
  type ReleaseArchitecture,
  SIGNATURE_FILE,
  SUMS_FILE,
  archiveName,
  assertReleaseArchitecture,
  assertReleaseVersion,
} from './release-name.js'
import { type ReleaseSource, describeSource, readReleaseFile } from './release-source.js'
import { parseSha256Sums, sha256Hex } from './sha256sums.js'
import { verifySumsSignature } from './signature.js'
import { TarFormatError } from '../fs/ustar.js'
import { type TarEntry, listTarEntries } from './tar-reader.js'
import { OutputTooLargeError, zstdDecompress } from './zstd.js'

export const DEFAULT_MAX_ARCHIVE_BYTES = 256 * 1024 * 1024
export const MAX_SUMS_BYTES = 64 * 1024
export const MAX_SIGNATURE_BYTES = 4 * 1024

export interface VerifyOptions {
  source: ReleaseSource
  version: string
  arch: string
  /** base64 of the raw 32-byte Ed25519 public key (fleet.yaml's release.publicKey). */
  publicKey: string
  /** Bound on the archive download and on the unpacked binary. */
  maxBytes?: number
}

export interface VerifyResult {
  /**
   * @pattern ^[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z][0-9A-Za-z.-]*)?$
   * @maxLength 64
   */
  version: string
  arch: ReleaseArchitecture
  /** @minLength 1 */
  source: string
  /** @pattern ^fleetkit-agent-[0-9A-Za-z.-]+-linux-(amd64|arm64)\.tar\.zst$ */
  archive: string
  /** @pattern ^[0-9a-f]{64}$ */
  sha256: string
  /**
   * @minimum 1
   * @asType integer
   */
  size: number
  entry: {
    /** @const "fleetkit-agent" */
    name: string
    /** @pattern ^[0-7]{4}$ */
    mode: string
    /**
     * @minimum 0
     * @asType integer
     */
    uid: number
    /**
     * @minimum 0
     * @asType integer
     */
    gid: number
    /**
     * @minimum 0
     * @asType integer
     */
    size: number
  }
  /** @pattern ^[A-Za-z0-9+/]{43}=$ */
  publicKey: string
}

function describeEntry(entry: TarEntry): string {
  return `${entry.type} ${JSON.stringify(entry.name)}${entry.linkname === '' ? '' : ` -> ${JSON.stringify(entry.linkname)}`}`
}

function unsafe(message: string, entries: TarEntry[]): FleetkitError {
  return new FleetkitError('RELEASE_ARCHIVE_UNSAFE', message, {
    actions: ['fleetkit release pack --version VERSION --input DIST'],
    data: { entries: entries.map((entry) => ({ name: entry.name, type: entry.type })) },
  })
}

/** Exactly one entry, a regular file named fleetkit-agent: no links, directories, paths or extras. */
export function checkArchiveEntries(entries: TarEntry[]): TarEntry {
  if (entries.length !== 1)
    throw unsafe(
      `the archive holds ${entries.length} entries (${entries.map(describeEntry).join(', ')}); exactly one, ${AGENT_ENTRY_NAME}, is allowed`,
      entries,
    )
  const entry = entries[0]!
  if (entry.type !== 'file') throw unsafe(`the archive entry is a ${describeEntry(entry)}, not a regular file`, entries)
  if (entry.name !== AGENT_ENTRY_NAME)
    throw unsafe(`the archive entry is named ${JSON.stringify(entry.name)}, not ${AGENT_ENTRY_NAME}`, entries)
  return entry
}

/** Refuses with RELEASE_SIGNATURE_INVALID unless `signature` (SHA256SUMS.sig) signs `sums` with `publicKey`. */
export function verifySignature(sums: Buffer, signature: Buffer, publicKey: KeyObject): void {
  if (!verifySumsSignature(sums, signature.toString('utf8'), publicKey)) {
    throw new FleetkitError(
      'RELEASE_SIGNATURE_INVALID',
      `${SIGNATURE_FILE} is not a signature of ${SUMS_FILE} by the pinned release key`,
      {
        actions: ['check release.publicKey in fleet.yaml', 'fleetkit release sign --key release.key --dir RELEASE_DIR'],
      },
    )
  }
}

function expectedSum(sums: Buffer, version: string, arch: ReleaseArchitecture): string {
  const name = archiveName(version, arch)
  const listed = parseSha256Sums(sums.toString('utf8')).lines
  const lines = listed.filter((line) => line.name === name)
  // Release `version` built for other architectures only: a missing build, not another release.
  const otherBuilds = RELEASE_ARCHITECTURES.filter(
    (other) => other !== arch && listed.some((line) => line.name === archiveName(version, other)),
  )
  if (lines.length === 0 && otherBuilds.length > 0) {
    throw new FleetkitError(
      'RELEASE_VERSION_MISMATCH',
      `release ${version} has no build for ${arch}: the signed ${SUMS_FILE} lists it for ${otherBuilds.join(', ')} only, not ${name}`,
      {
        actions: [
          `fleetkit release pack --version NEW-VERSION --input DIR   (DIR holding linux-${arch}/fleetkit-agent beside the others; then sign and publish it)`,
        ],
        data: { expected: name, actual: listed.map((line) => line.name), architecture: arch },
      },
    )
  }
  if (lines.length === 0) {
    throw new FleetkitError(
      'RELEASE_VERSION_MISMATCH',
      `the signed ${SUMS_FILE} does not list ${name}: it is not release ${version}`,
      {
        data: { expected: name, actual: parseSha256Sums(sums.toString('utf8')).lines.map((line) => line.name) },
      },
    )
  }
  if (lines.length > 1)
    throw new FleetkitError('RELEASE_CHECKSUM_MISMATCH', `the signed ${SUMS_FILE} lists ${name} ${lines.length} times`)
  return lines[0]!.sha256
}

export async function verifyRelease(options: VerifyOptions): Promise<VerifyResult> {
  const version = assertReleaseVersion(options.version)
  const arch = assertReleaseArchitecture(options.arch)
  const publicKey = publicKeyFromRaw(options.publicKey)
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_ARCHIVE_BYTES
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0)
    throw new FleetkitError('RELEASE_INPUT_INVALID', `the size limit ${maxBytes} is not a positive integer`)

  const sums = await readReleaseFile(options.source, version, SUMS_FILE, { maxBytes: MAX_SUMS_BYTES })
  const signature = await readReleaseFile(options.source, version, SIGNATURE_FILE, { maxBytes: MAX_SIGNATURE_BYTES })
  verifySignature(sums, signature, publicKey)

  const name = archiveName(version, arch)
  const expected = expectedSum(sums, version, arch)
  const archive = await readReleaseFile(options.source, version, name, { maxBytes })
  const actual = sha256Hex(archive)
  if (actual !== expected) {
    throw new FleetkitError(
      'RELEASE_CHECKSUM_MISMATCH',
      `${name} has SHA-256 ${actual}, the signed ${SUMS_FILE} says ${expected}`,
      { data: { expected, actual } },
    )
  }

  let entries: TarEntry[]
  try {
    // The tar stream holds the binary plus headers and padding: allow a little over maxBytes.
    entries = listTarEntries(await zstdDecompress(archive, maxBytes + 64 * 1024))
  } catch (error) {
    if (error instanceof OutputTooLargeError) throw unsafe(`${name} unpacks to more than ${maxBytes} bytes`, [])
    if (error instanceof TarFormatError) throw unsafe(`${name} is not a valid tar archive: ${error.message}`, [])
    if (error instanceof FleetkitError) throw error
    throw unsafe(`${name} is not a valid zstd archive`, [])
  }
  const entry = checkArchiveEntries(entries)
  return {
    version,
    arch,
    source: describeSource(options.source, version),
    archive: name,
    sha256: actual,
    size: archive.length,
    entry: {
      name: entry.name,
      mode: (entry.mode & 0o7777).toString(8).padStart(4, '0'),
      uid: entry.uid,
      gid: entry.gid,
      size: entry.size,
    },
    publicKey: options.publicKey.trim(),
  }
}
