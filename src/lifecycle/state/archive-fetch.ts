// `fleetkit db archive fetch URL DIR` on a machine replacing the control host: the off-host archive is
// judged as `verify --remote` judges it (archive-inspect.ts: a damaged file or a gap refuses, nothing is
// fetched), then its newest base backup and the WAL after it go into DIR and the kit (the server's password,
// the PKI files, the releases) into the state directory: what `db restore --to latest --archive DIR` needs.
// The kit's gateway.env goes where the gateway unit reads it (/etc/fleetkit), unless one is there.
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { Env } from '../../config/state-dir.js'
import { resolvePkiDir } from '../../pki/pki-dir.js'
import { checkArchiveDir, prepareArchiveDir, requireEmbedded } from '../../store/embedded/archive-dir.js'
import { checkedArchiveRemote } from '../../store/embedded/archive-remote.js'
import { embeddedServerPaths } from '../../store/embedded/paths.js'
import { postgresRunAs } from '../../store/postgres-binaries.js'
import { fetchRestorable, inspectArchive, requireRestorable } from './archive-inspect.js'
import { releasesDirOf } from '../../release/releases-dir.js'
import { fetchKit, type GatewayEnvFetched, requireEmptyKitTarget } from './archive-kit.js'
import type { OpenRemoteArchive } from './remote-files.js'

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
  /** The published agent releases the kit held, now in `<state>/releases/` for the gateway to serve. */
  releases: string[]
  /** The gateway unit's environment file the kit held: written where the unit reads it, one already there kept, or none. */
  gatewayEnv: GatewayEnvFetched
  /** Where it was (or would have been) written. */
  gatewayEnvFile: string
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
  /** Where the kit's gateway.env goes (`/etc/fleetkit/gateway.env`), unless a file is there already. */
  gatewayEnvFile: string
  now: () => Date
  openRemote: OpenRemoteArchive
  progress: (message: string) => void
}): Promise<ArchiveFetchResult> {
  requireEmbedded(options.env)
  const remote = await checkedArchiveRemote(options, options.now())
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
    const restorable = requireRestorable(await inspectArchive(files, 'remote', remote.url, options.progress))
    // A new machine has no `postgres` user yet: made now, the fetched archive is its (as the restore needs).
    const runAs = await postgresRunAs({ root: paths.root, create: true })
    const layout = await prepareArchiveDir(dir, runAs)
    const count = await fetchRestorable(files, restorable, layout, runAs, options.progress)
    const places = {
      paths,
      pkiDir,
      releasesDir: releasesDirOf(options.stateDir),
      gatewayEnvFile: options.gatewayEnvFile,
    }
    const kit = await fetchKit(files, places, options.progress)
    return {
      url: remote.url,
      dir,
      baseBackup: restorable.base.label,
      newestWal: restorable.chain.newest,
      files: count,
      passwordFile: paths.passwordFile,
      pkiDir,
      pkiFiles: kit.pkiFiles,
      releases: kit.releases,
      gatewayEnv: kit.gatewayEnv,
      gatewayEnvFile: options.gatewayEnvFile,
    }
  } finally {
    files.close()
  }
}
