// The only file I/O of src/pki: reading the PKI directory (private keys refused unless
// 0600-or-tighter and owned by this user) and writing new files atomically.
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto'
import { lstat, readdir, readFile, stat, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { createFileOnce, removeDurably, writeFilesAtomic } from '../fs/atomic-file.js'
import { certificateFingerprintSha256 } from './fingerprint.js'
import { caMissingError } from './restore-leftovers.js'
import { bundleFingerprints } from './trust-bundle.js'
import { assertPrivateDirectory } from '../fs/private-directory.js'
import { describeUntrusted, findUntrustedDirectory, fleetkitTrustRules } from '../fs/trusted-directory.js'
import { readPrivateKeyFile as readKeyFile } from '../fs/private-key-file.js'
import { makeDirectories, STATE_PARENT_MODE } from '../fs/make-directories.js'

export const PKI_FILE_NAMES = {
  caCertificate: 'ca.pem',
  caKey: 'ca.key',
  bundle: 'ca-bundle.pem',
  serverCertificate: 'server.pem',
  serverKey: 'server.key',
} as const

/** The CA being rotated out, kept beside the new one until the rotation completes or is aborted. */
export const ARCHIVE_FILE_NAMES = {
  caCertificate: 'ca.pem.previous',
  caKey: 'ca.key.previous',
  bundle: 'ca-bundle.pem.previous',
} as const

export interface ArchivedCa {
  caCertificate: string
  caKey: string
  bundle: string
}

export interface PkiFileText {
  caCertificate: string
  caKey: string
  bundle: string
  serverCertificate: string
  serverKey: string
}

export interface NewPkiFile {
  name: string
  content: string
  mode: number
}

/** The running user's uid (undefined where the platform has none), injectable for tests. */
function currentUid(): number | undefined {
  return typeof process.getuid === 'function' ? process.getuid() : undefined
}

/**
 * Read a private key file, refusing one that a group or other users can read or
 * write, a link, or one that another user owns: such a key may already be someone else's.
 */
async function readPrivateKeyFile(path: string, uid: number | undefined = currentUid()): Promise<string> {
  // Root uses a PKI directory the gateway service's account owns (fleetkit gateway install): its
  // keys must then be that account's, as the gateway reading them demands.
  if (uid === 0) uid = (await stat(dirname(path))).uid
  return readKeyFile(
    path,
    (problem) => {
      if (problem.kind === 'owner') {
        return new FleetkitError(
          'CA_KEY_PERMISSIONS',
          `${path} is owned by uid ${problem.ownerUid}, not by the running user (uid ${problem.runningUid}); refusing to use it`,
          {
            actions: [`chown ${problem.runningUid} ${path}`, 'run the gateway as the user that owns the PKI directory'],
            data: { path, ownerUid: problem.ownerUid, runningUid: problem.runningUid },
          },
        )
      }
      const mode = problem.kind === 'mode' ? problem.mode : 'link'
      const what =
        problem.kind === 'mode' ? `is readable or writable by group or others (mode ${mode})` : 'is a symbolic link'
      return new FleetkitError('CA_KEY_PERMISSIONS', `${path} ${what}; refusing to use it`, {
        actions:
          problem.kind === 'mode'
            ? [`chmod 0600 ${path}`, 'if others may have read it, treat the key as compromised and rotate the CA']
            : [`replace ${path} with the key file itself (mode 0600)`],
        data: { path, mode },
      })
    },
    uid,
  )
}

/**
 * Refuse a PKI directory that group or others may write: they could append their own CA to
 * `ca-bundle.pem`, which seeds pin and agents trust, and so stand in for the gateway.
 */
export async function assertPkiDirectoryPrivate(dir: string): Promise<void> {
  await assertPrivateDirectory(
    dir,
    (shown) =>
      new FleetkitError(
        'CA_KEY_PERMISSIONS',
        `the PKI directory ${dir} is writable by group or others (mode ${shown}); refusing to use it`,
        {
          actions: [
            `chmod 0700 ${dir}`,
            'if others may have changed ca-bundle.pem or the keys, treat the CA as compromised and create a new PKI',
          ],
          data: { path: dir, mode: shown },
        },
      ),
  )
  // Whose it is, and whose the directories above it are: another user who owns one could rename the PKI
  // away and put theirs in place, whatever its own mode (src/fs/trusted-directory.ts).
  const untrusted = await findUntrustedDirectory(dir, fleetkitTrustRules())
  if (untrusted) {
    const { why, fix } = describeUntrusted(untrusted, dir)
    throw new FleetkitError(
      'CA_KEY_PERMISSIONS',
      `refusing the PKI directory ${dir}: ${why}, who could rename it away and put their own CA in its place`,
      {
        actions: [fix, 'or keep the PKI in a directory of your own (--pki-dir, --state-dir)'],
        data: {
          path: dir,
          blockedBy: untrusted.path,
          reason: untrusted.kind,
          uid: untrusted.uid,
          mode: untrusted.mode,
        },
      },
    )
  }
}

async function present(path: string): Promise<boolean> {
  try {
    await stat(path)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
}

/**
 * A key without its certificate is what a `ca init` killed between its renames leaves (the
 * certificate is renamed last). Every command gives the same advice for it, so it is checked here.
 */
export async function assertNoKeyWithoutCertificate(dir: string): Promise<void> {
  for (const [key, certificate] of [
    [PKI_FILE_NAMES.caKey, PKI_FILE_NAMES.caCertificate],
    [PKI_FILE_NAMES.serverKey, PKI_FILE_NAMES.serverCertificate],
  ] as const) {
    if ((await present(join(dir, key))) && !(await present(join(dir, certificate)))) {
      throw new FleetkitError(
        'PKI_KEY_WITHOUT_CERTIFICATE',
        `${join(dir, key)} has no ${certificate} beside it: an interrupted fleetkit ca init (or a lost file) left the PKI directory half-written`,
        {
          actions: [
            `if this CA ever issued certificates, restore ${certificate} from backup into ${dir}`,
            `if it never did (the interrupted ca init): mv ${dir} ${dir}.incomplete && fleetkit ca init`,
          ],
          data: { dir, key, missing: certificate },
        },
      )
    }
  }
}

/** `.<name>.<12 hex>.tmp`: the temp names writeFilesAtomic gives PKI files (src/fs/atomic-file.ts). */
const STALE_TEMP = /^\.(ca\.pem|ca\.key|ca-bundle\.pem|server\.pem|server\.key)(\.previous)?\.[0-9a-f]{12}\.tmp$/

/**
 * Remove the temp files a killed `ca init`, `ca rotate` or `ca server-cert` left (they may hold
 * a private key). Only PKI commands write here, and each calls this before it writes.
 */
export async function removeStaleTempFiles(dir: string): Promise<string[]> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
  const removed: string[] = []
  for (const name of names.filter((n) => STALE_TEMP.test(n))) {
    await unlink(join(dir, name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error
    })
    removed.push(name)
  }
  return removed
}

export type ArchivePart = keyof typeof ARCHIVE_FILE_NAMES

/** The archive's files that exist, as their bytes: a partial archive too, for the caller to judge. */
export async function readArchiveParts(dir: string): Promise<Partial<Record<ArchivePart, Buffer>>> {
  const parts: Partial<Record<ArchivePart, Buffer>> = {}
  for (const part of Object.keys(ARCHIVE_FILE_NAMES) as ArchivePart[]) {
    const path = join(dir, ARCHIVE_FILE_NAMES[part])
    const info = await lstat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined
      throw error
    })
    if (!info) continue
    // A link or a directory is no file fleetkit wrote: judged as content that matches nothing.
    parts[part] = info.isFile() ? await readFile(path) : Buffer.alloc(0)
  }
  return parts
}

function shortSha(sha: string): string {
  return `${sha.slice(0, 16)}…`
}

/** What one archive file holds, in words an operator can check (fingerprints, "a copy of ca.pem"). */
function describePart(part: ArchivePart, bytes: Buffer, current: PkiFileText): string {
  const text = bytes.toString('utf8')
  const copyOf = PKI_FILE_NAMES[part]
  if (bytes.length > 0 && bytes.equals(Buffer.from(current[part], 'utf8'))) return `a copy of ${copyOf}`
  try {
    if (part === 'caCertificate') {
      return `the certificate of CA ${shortSha(certificateFingerprintSha256(text))}, not the current CA ${shortSha(certificateFingerprintSha256(current.caCertificate))}`
    }
    if (part === 'bundle') {
      const shas = bundleFingerprints(text)
      if (shas.length === 0) return 'no certificate at all'
      return `a trust bundle of CA ${shas.map(shortSha).join(', ')}, not the current ${copyOf}`
    }
    const spki = createPublicKey(createPrivateKey(text)).export({ format: 'der', type: 'spki' })
    const caSpki = new X509Certificate(current.caCertificate).publicKey.export({ format: 'der', type: 'spki' })
    if (spki.equals(caSpki)) return `the key of the current CA, but not a copy of ${copyOf}`
    return `a private key that is not the current CA's (${copyOf})`
  } catch {
    return `not a readable ${part === 'caKey' ? 'private key' : 'certificate'}`
  }
}

/**
 * The archive is partial and no killed fleetkit run explains it: say which file is there, what it
 * holds and which are missing, so an operator knows what to look at before moving anything.
 */
export function partialArchiveError(
  dir: string,
  parts: Partial<Record<ArchivePart, Buffer>>,
  current: PkiFileText,
  why: string,
): FleetkitError {
  const present = (Object.keys(ARCHIVE_FILE_NAMES) as ArchivePart[]).filter((part) => parts[part] !== undefined)
  const missing = (Object.keys(ARCHIVE_FILE_NAMES) as ArchivePart[]).filter((part) => parts[part] === undefined)
  const found = present.map(
    (part) => `${join(dir, ARCHIVE_FILE_NAMES[part])} is ${describePart(part, parts[part]!, current)}`,
  )
  return new FleetkitError(
    'PKI_INVALID',
    `the PKI directory ${dir} holds only part of an archived CA: ${found.join('; ')}; missing ${missing
      .map((part) => ARCHIVE_FILE_NAMES[part])
      .join(', ')}. ${why}`,
    {
      actions: [
        ...present.map((part) =>
          part === 'caKey'
            ? `openssl pkey -in ${join(dir, ARCHIVE_FILE_NAMES[part])} -pubout   (compare with: openssl x509 -in ${join(dir, PKI_FILE_NAMES.caCertificate)} -noout -pubkey)`
            : `openssl x509 -in ${join(dir, ARCHIVE_FILE_NAMES[part])} -noout -subject -fingerprint -sha256`,
        ),
        'fleetkit ca rotate --status',
        `if no rotation needs it, move ${present.map((part) => ARCHIVE_FILE_NAMES[part]).join(' and ')} out of ${dir}; otherwise restore the PKI directory from backup`,
      ],
      data: {
        dir,
        problem: 'partial archive',
        present: present.map((part) => ARCHIVE_FILE_NAMES[part]),
        missing: missing.map((part) => ARCHIVE_FILE_NAMES[part]),
      },
    },
  )
}

/**
 * The archived CA of a rotation in progress, or undefined when there is none. A partial archive is
 * an error here: `ca rotate` finishes the leftovers of its own killed runs before it reads the archive.
 */
export async function readArchivedCa(
  dir: string,
  uid: number | undefined = currentUid(),
): Promise<ArchivedCa | undefined> {
  const has = await Promise.all(Object.values(ARCHIVE_FILE_NAMES).map((name) => present(join(dir, name))))
  if (has.every((h) => !h)) return undefined
  if (!has.every((h) => h)) {
    throw partialArchiveError(
      dir,
      await readArchiveParts(dir),
      await readPkiDirectory(dir, uid),
      'A rotation in progress needs all three files.',
    )
  }
  return {
    caCertificate: await readFile(join(dir, ARCHIVE_FILE_NAMES.caCertificate), 'utf8'),
    caKey: await readPrivateKeyFile(join(dir, ARCHIVE_FILE_NAMES.caKey), uid),
    bundle: await readFile(join(dir, ARCHIVE_FILE_NAMES.bundle), 'utf8'),
  }
}

/** Delete the archived CA (its key first: that is what must not outlive a rotation). */
export async function removeArchivedCa(dir: string): Promise<void> {
  await removeDurably(join(dir, ARCHIVE_FILE_NAMES.caKey))
  await removeDurably(join(dir, ARCHIVE_FILE_NAMES.caCertificate))
  await removeDurably(join(dir, ARCHIVE_FILE_NAMES.bundle))
}

/** Read the whole PKI directory. Missing files are reported as CA_MISSING. */
export async function readPkiDirectory(dir: string, uid: number | undefined = currentUid()): Promise<PkiFileText> {
  const path = (name: string) => join(dir, name)
  await assertPkiDirectoryPrivate(dir)
  await assertNoKeyWithoutCertificate(dir)
  try {
    const caCertificate = await readFile(path(PKI_FILE_NAMES.caCertificate), 'utf8')
    const caKey = await readPrivateKeyFile(path(PKI_FILE_NAMES.caKey), uid)
    const bundle = await readFile(path(PKI_FILE_NAMES.bundle), 'utf8')
    const serverCertificate = await readFile(path(PKI_FILE_NAMES.serverCertificate), 'utf8')
    const serverKey = await readPrivateKeyFile(path(PKI_FILE_NAMES.serverKey), uid)
    return { caCertificate, caKey, bundle, serverCertificate, serverKey }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') {
      throw await caMissingError(
        dir,
        `the PKI directory ${dir} lacks ${(error as NodeJS.ErrnoException).path ?? 'a file'}`,
        {
          actions: ['fleetkit ca init'],
          data: { dir },
        },
      )
    }
    throw error
  }
}

/** Which of the CA files already exist in the directory. */
export async function existingCaFiles(dir: string): Promise<string[]> {
  const found: string[] = []
  for (const name of [PKI_FILE_NAMES.caCertificate, PKI_FILE_NAMES.caKey]) {
    try {
      await stat(join(dir, name))
      found.push(name)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
  }
  return found
}

/**
 * Write files into dir (created 0700 if missing) with the one atomic writer: all written
 * before any is renamed, renamed in the order given. A reader never sees a half-written file.
 */
export async function writePkiFiles(
  dir: string,
  files: readonly (NewPkiFile | { name: string; content: Uint8Array; mode: number })[],
): Promise<void> {
  const owner = await preparePkiDirectory(dir)
  await writeFilesAtomic(dir, owner ? files.map((file) => ({ ...file, owner })) : files)
}

/**
 * One file created only if missing (createFileOnce: of writers racing, one wins and every one reads
 * its file), as writePkiFiles writes: the directory made and checked, the file given to its owner.
 * False when the file was there already.
 */
export async function createPkiFileOnce(
  dir: string,
  file: { name: string; content: Uint8Array; mode: number },
): Promise<boolean> {
  const owner = await preparePkiDirectory(dir)
  return createFileOnce(join(dir, file.name), file.content, file.mode, owner)
}

/**
 * The directory made (0700) and checked private. Root writing into the gateway service's PKI
 * directory gives each file to the directory's owner before it appears, so the gateway never sees
 * a key it may not use: that owner, or undefined.
 */
async function preparePkiDirectory(dir: string): Promise<{ uid: number; gid: number } | undefined> {
  await makeDirectories(dir, 0o700, STATE_PARENT_MODE)
  await assertPkiDirectoryPrivate(dir)
  const info = await stat(dir)
  return currentUid() === 0 && info.uid !== 0 ? { uid: info.uid, gid: info.gid } : undefined
}
