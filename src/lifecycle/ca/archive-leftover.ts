// What a killed `ca rotate` leaves of the archive (ca.pem.previous, ca.key.previous,
// ca-bundle.pem.previous), judged under the PKI lock so the phase that runs again can finish it.
// A begin renames the three in one by one (an abort writes the current files back from them), a
// completion unlinks them one by one (key first): a kill in between leaves a partial archive.
import { certificateFingerprintSha256 } from '../../pki/fingerprint.js'
import {
  ARCHIVE_FILE_NAMES,
  type ArchivePart,
  partialArchiveError,
  type PkiFileText,
  readArchiveParts,
} from '../../pki/pki-files.js'
import { bundleFingerprints } from '../../pki/trust-bundle.js'
import type { CaRotationRow } from '../../store/pki/ca-rotations.js'

export type ArchiveState =
  | { kind: 'none' }
  /** All three files; `copiesOfCurrent`: each is a copy of the current CA's file (a killed begin's or abort's). */
  | { kind: 'whole'; copiesOfCurrent: boolean }
  /** Part of an archive that a killed run left and no rotation needs: removing it (removeArchivedCa) finishes that run. */
  | { kind: 'leftover'; files: string[] }

/** Whether every archive file there is a byte-for-byte copy of the current CA's file of the same role. */
function copiesOfCurrent(parts: Partial<Record<ArchivePart, Buffer>>, current: PkiFileText): boolean {
  return (Object.keys(parts) as ArchivePart[]).every((part) => parts[part]!.equals(Buffer.from(current[part], 'utf8')))
}

function fingerprintOr(pem: Buffer, fallback: string): string {
  try {
    return certificateFingerprintSha256(pem.toString('utf8'))
  } catch {
    return fallback
  }
}

/**
 * What a completion leaves when killed between its unlinks, the state already `completed` and the new
 * CA in place: the key gone first, then ca.pem.previous; what remains is the old CA's certificate
 * and the old bundle (which trusts the old CA), nothing secret.
 */
function completionLeftover(
  parts: Partial<Record<ArchivePart, Buffer>>,
  currentSha: string,
  latest: CaRotationRow | undefined,
): boolean {
  if (latest?.status !== 'completed' || latest.newCaSha256 !== currentSha) return false
  if (parts.caKey || !parts.bundle) return false
  if (parts.caCertificate && fingerprintOr(parts.caCertificate, '') !== latest.oldCaSha256) return false
  try {
    return bundleFingerprints(parts.bundle.toString('utf8')).includes(latest.oldCaSha256)
  } catch {
    return false
  }
}

/**
 * Judges the archive of `pkiDir` against the current files and the latest rotation. A partial archive
 * is a leftover when its files are copies of the current CA's (a begin killed between its first
 * renames, before its transaction committed; or an abort killed between its unlinks) or what a
 * completion killed between its unlinks leaves. Any other partial archive is PKI_INVALID naming each
 * file and what it holds: nothing is removed that a rotation may still need.
 */
export async function judgeArchive(
  pkiDir: string,
  current: PkiFileText,
  latest: CaRotationRow | undefined,
): Promise<ArchiveState> {
  const parts = await readArchiveParts(pkiDir)
  const present = (Object.keys(parts) as ArchivePart[]).map((part) => ARCHIVE_FILE_NAMES[part])
  if (present.length === 0) return { kind: 'none' }
  if (present.length === Object.keys(ARCHIVE_FILE_NAMES).length)
    return { kind: 'whole', copiesOfCurrent: copiesOfCurrent(parts, current) }
  if (copiesOfCurrent(parts, current)) return { kind: 'leftover', files: present }
  const currentSha = certificateFingerprintSha256(current.caCertificate)
  if (completionLeftover(parts, currentSha, latest)) return { kind: 'leftover', files: present }
  throw partialArchiveError(
    pkiDir,
    parts,
    current,
    latest?.status === 'begun'
      ? `The rotation begun ${latest.begunAt.toISOString()} (old CA ${latest.oldCaSha256.slice(0, 16)}…) needs all three to abort; it can still complete.`
      : 'No killed fleetkit ca rotate leaves this (its leftovers are copies of the current CA, or the old CA of a completed rotation without its key).',
  )
}
