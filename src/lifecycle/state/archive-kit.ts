// What a new control host needs beside the database, shipped with the archive as `kit/`: the embedded
// server's password (`kit/password`: the base backup's roles know only its hash, so without it the
// restored server cannot be reached), the PKI directory's files (`kit/pki/NAME`: the CA and the
// gateway's certificate, so enrolled agents carry on with theirs) and the published agent releases
// (`kit/releases/VERSION/NAME`: hosts booted from an agent seed, and agents updating, fetch them from the
// gateway) and the gateway unit's environment file (`kit/gateway.env`: its binds). Each file is shipped
// again whenever its SHA-256 differs from the remote's checksum (a CA rotation, a new server certificate,
// a release published again with --replace).
import { chmod, link, readdir, readFile, rename, stat, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { namesDatabaseUrl } from '../../config/gateway-env-file.js'
import { withPkiLock } from '../../pki/pki-lock.js'
import { isReleaseFileName, isReleaseVersion } from '../../release/release-name.js'
import type { ArchiveRemote } from '../../store/embedded/archive-remote.js'
import { fileSha256 } from '../../store/embedded/base-backup.js'
import type { EmbeddedServerPaths } from '../../store/embedded/paths.js'
import { parseChecksumLine, type RemoteArchiveFiles, shipFile, shipText, textSha256 } from './remote-files.js'
import { makeDirectories, STATE_PARENT_MODE } from '../../fs/make-directories.js'

/** Where the kit's parts are on this machine. */
export interface KitPlaces {
  paths: EmbeddedServerPaths
  pkiDir: string
  /** `<state>/releases`: what `fleetkit release publish` wrote and the gateway serves. */
  releasesDir: string
  /** The gateway unit's EnvironmentFile (`/etc/fleetkit/gateway.env`): its binds go with the kit. */
  gatewayEnvFile: string
}

/** The published releases, version by version, with their files: only the names the gateway serves. */
async function publishedReleases(releasesDir: string): Promise<{ version: string; names: string[] }[]> {
  const out: { version: string; names: string[] }[] = []
  // A publish in progress writes a dot-directory and renames it: only complete versions are listed.
  for (const version of (await readdir(releasesDir).catch(() => [] as string[])).sort()) {
    if (!isReleaseVersion(version)) continue
    const names = (await readdir(join(releasesDir, version)).catch(() => [] as string[]))
      .filter((name) => isReleaseFileName(version, name))
      .sort()
    if (names.length > 0) out.push({ version, names })
  }
  return out
}

/** A kit file: its remote path and either its local path or (the gateway.env) the text that was checked. */
type KitItem = { path: string; local: string } | { path: string; text: string }

/** The kit's files: the password, the PKI directory's plain files, the releases, the gateway.env. */
async function kitFiles(places: KitPlaces): Promise<KitItem[]> {
  const { paths, pkiDir, releasesDir } = places
  const files: KitItem[] = [{ local: paths.passwordFile, path: 'kit/password' }]
  for (const name of (await readdir(pkiDir).catch(() => [] as string[])).sort()) {
    // Plain files only, as `db backup` takes them: a half-written temp file (`.name.hex.tmp`) and the lock are not the PKI.
    if (name.startsWith('.')) continue
    if ((await stat(join(pkiDir, name)).catch(() => undefined))?.isFile())
      files.push({ local: join(pkiDir, name), path: `kit/pki/${name}` })
  }
  for (const { version, names } of await publishedReleases(releasesDir))
    for (const name of names)
      files.push({ local: join(releasesDir, version, name), path: `kit/releases/${version}/${name}` })
  // Not when it names DATABASE_URL: that gateway's database is not the archived one, and the URL may hold a
  // password. Not when the shipping account cannot read it (0600 root): the replacement then writes it by hand.
  // The text checked is the text shipped, so an edit after the check cannot ship a URL.
  const gatewayEnv = await readFile(places.gatewayEnvFile, 'utf8').catch(() => undefined)
  if (gatewayEnv !== undefined && !namesDatabaseUrl(gatewayEnv))
    files.push({ text: gatewayEnv, path: 'kit/gateway.env' })
  return files
}

/** Ships each kit file whose checksum the remote lacks or differs; under the PKI lock, so no rotation is seen half done. */
export async function shipKit(
  files: RemoteArchiveFiles,
  places: KitPlaces,
  remote: ArchiveRemote,
  progress: (message: string) => void,
): Promise<{ shipped: string[]; bytes: number }> {
  await files.mkdirs('kit/pki')
  return withPkiLock(places.pkiDir, async () => shipKitFiles(files, await kitFiles(places), remote, progress), {
    readOnly: true,
  })
}

async function shipKitFiles(
  files: RemoteArchiveFiles,
  items: KitItem[],
  remote: ArchiveRemote,
  progress: (message: string) => void,
): Promise<{ shipped: string[]; bytes: number }> {
  const shipped: string[] = []
  let bytes = 0
  const dirs = [...new Set(items.map((item) => item.path.slice(0, item.path.lastIndexOf('/'))))]
  const there = new Set<string>()
  for (const dir of dirs) {
    if (dir.startsWith('kit/releases/')) await files.mkdirs(dir)
    for (const name of await files.list(dir)) there.add(`${dir}/${name}`)
  }
  for (const item of items) {
    const local = 'text' in item ? textSha256(item.text) : await fileSha256(item.local).catch(() => undefined)
    if (local === undefined) continue
    const remoteSum = there.has(`${item.path}.sha256`)
      ? parseChecksumLine(await files.readText(`${item.path}.sha256`))
      : undefined
    if (remoteSum === local) continue
    progress(`Shipping ${item.path}`)
    const sent =
      'text' in item
        ? await shipText(files, item.text, item.path, remote)
        : await shipFile(files, item.local, item.path, remote)
    if (sent === undefined) continue
    shipped.push(item.path)
    bytes += sent
  }
  return { shipped, bytes }
}

/**
 * Refused (nothing written) when the state directory holds a password or the PKI directory files: a
 * restore onto a machine with state is `db restore`'s to judge, not a fetch's. Checked before anything is fetched.
 */
export async function requireEmptyKitTarget(paths: EmbeddedServerPaths, pkiDir: string): Promise<void> {
  const held = [
    ...((await stat(paths.passwordFile).catch(() => undefined)) ? [paths.passwordFile] : []),
    ...(await readdir(pkiDir).catch(() => [] as string[]))
      .filter((n) => !n.startsWith('.'))
      .map((n) => join(pkiDir, n)),
  ]
  if (held.length > 0) {
    throw new FleetkitError('RESTORE_TARGET_NOT_EMPTY', `${held[0]} exists: fetch the kit into a new state directory`, {
      actions: ['fleetkit db archive fetch URL DIR --state-dir NEW_STATE_DIR (an empty one)'],
      data: { held },
    })
  }
}

/**
 * On a new machine (requireEmptyKitTarget first): the kit into `<state>/postgres/password` and the PKI directory, each file compared
 * with its checksum.
 */
export async function fetchKit(
  files: Pick<RemoteArchiveFiles, 'list' | 'readText' | 'get'>,
  places: KitPlaces,
  progress: (message: string) => void,
): Promise<{ password: boolean; pkiFiles: number; releases: string[]; gatewayEnv: GatewayEnvFetched }> {
  const { paths, pkiDir, releasesDir } = places
  const kit = await files.list('kit')
  // Names as the PKI directory has them: nothing the remote lists can lead a write elsewhere.
  const pki = (await files.list('kit/pki'))
    .filter((n) => /^[A-Za-z0-9_-][A-Za-z0-9._-]*\.sha256$/.test(n))
    .map((n) => n.slice(0, -'.sha256'.length))
  if (!kit.includes('password.sha256')) {
    throw new FleetkitError(
      'ARCHIVE_VERIFY_FAILED',
      'the off-host archive holds no kit/password: it was shipped by an older fleetkit',
      {
        actions: [
          'fleetkit db archive ship on the old control host if it still runs',
          'docs/state.md, "Replacing the control host"',
        ],
        data: { missing: 'kit/password' },
      },
    )
  }
  await makeDirectories(paths.root, 0o700, STATE_PARENT_MODE)
  await makeDirectories(pkiDir, 0o700, STATE_PARENT_MODE)
  // Fetched beside its place as `.part`, checked against its checksum, 0600; returns the `.part`.
  const fetchBeside = async (path: string, local: string): Promise<string> => {
    progress(`Fetching ${path}`)
    await files.get(path, `${local}.part`)
    const want = parseChecksumLine(await files.readText(`${path}.sha256`))
    if (want === undefined || (await fileSha256(`${local}.part`)) !== want) {
      throw new FleetkitError('ARCHIVE_VERIFY_FAILED', `${path} does not match its checksum on the off-host archive`, {
        actions: ['fleetkit db archive verify --remote (on the old control host, or after remote add here)'],
        data: { damaged: [{ file: path, why: 'differs from its .sha256' }] },
      })
    }
    await chmod(`${local}.part`, 0o600)
    return `${local}.part`
  }
  const fetchOne = async (path: string, local: string) => {
    await rename(await fetchBeside(path, local), local)
  }
  await fetchOne('kit/password', paths.passwordFile)
  for (const name of pki) await fetchOne(`kit/pki/${name}`, join(pkiDir, name))
  const releases = await fetchReleases(files, releasesDir, fetchOne)
  return { password: true, pkiFiles: pki.length, releases, gatewayEnv: await fetchGatewayEnv(kit, places, fetchBeside) }
}

/** What became of the kit's `gateway.env`: written, an operator's own kept, or none in the kit. */
export type GatewayEnvFetched = 'fetched' | 'kept' | 'none'

/** The kit's gateway.env where the unit reads it, unless one is there already (the operator's is kept). */
async function fetchGatewayEnv(
  kit: string[],
  places: KitPlaces,
  fetchBeside: (path: string, local: string) => Promise<string>,
): Promise<GatewayEnvFetched> {
  if (!kit.includes('gateway.env.sha256')) return 'none'
  if (await stat(places.gatewayEnvFile).catch(() => undefined)) return 'kept'
  await makeDirectories(dirname(places.gatewayEnvFile), 0o755)
  const part = await fetchBeside('kit/gateway.env', places.gatewayEnvFile)
  try {
    // A link, not a rename: one the operator wrote meanwhile is kept, never replaced.
    await link(part, places.gatewayEnvFile)
    return 'fetched'
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return 'kept'
    throw error
  } finally {
    await unlink(part).catch(() => undefined)
  }
}

/**
 * Each published release of the kit into `<state>/releases/VERSION/`, as `release publish` leaves it: its
 * files fetched into a dot-directory (never served) and renamed into place whole. A version already there is kept.
 */
async function fetchReleases(
  files: Pick<RemoteArchiveFiles, 'list'>,
  releasesDir: string,
  fetchOne: (path: string, local: string) => Promise<void>,
): Promise<string[]> {
  const fetched: string[] = []
  // Names as the gateway serves them: nothing the remote lists can lead a write elsewhere.
  for (const version of (await files.list('kit/releases')).filter(isReleaseVersion).sort()) {
    const names = (await files.list(`kit/releases/${version}`))
      .filter((n) => n.endsWith('.sha256'))
      .map((n) => n.slice(0, -'.sha256'.length))
      .filter((n) => isReleaseFileName(version, n))
    const target = join(releasesDir, version)
    if (names.length === 0 || (await stat(target).catch(() => undefined))) continue
    const partial = join(releasesDir, `.fetch-${version}-${process.pid}`)
    await makeDirectories(partial, 0o755)
    for (const name of names) await fetchOne(`kit/releases/${version}/${name}`, join(partial, name))
    await Promise.all(names.map((name) => chmod(join(partial, name), 0o644)))
    await rename(partial, target)
    fetched.push(version)
  }
  return fetched
}
