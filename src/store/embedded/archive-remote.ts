// The off-host copy of the embedded server's WAL archive: a directory on another host reached over
// SSH/SFTP (`fleetkit db archive remote add`). Its address, pinned host key and identity file are recorded
// in `<state>/postgres/archive-remote.json`; what the last `db archive ship` did in `archive-ship.json`.
// Both are files, as archive.json is: `db status` and a restore read them without a running server.
import { readFile, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { EmbeddedServerPaths } from './paths.js'
import { writeStateJsonFile } from './state-json-file.js'

export interface ArchiveRemote {
  /** ssh://user@host[:port]/path, as given (it holds no secret: a password in it is refused). */
  url: string
  user: string
  host: string
  /**
   * @minimum 1
   * @maximum 65535
   * @asType integer
   */
  port: number
  /** The absolute directory on the host that holds `wal/` and `base/` as the local archive does. */
  path: string
  /** "TYPE BASE64": the one host key the host must present. */
  hostKey: string
  /** The private key fleetkit logs in with (its path; the key itself is never copied). */
  identityFile: string
  /** @format date-time */
  addedAt: string
}

/** What the last `db archive ship` did, for `db status` and the gateway's gauges. */
export interface ShipStatus {
  /** The newest WAL segment on the remote with its checksum (null: none yet). */
  lastShippedWal: string | null
  /** @format date-time */
  lastSuccessAt: string | null
  /** @format date-time */
  lastAttemptAt: string
  /** The last attempt's failure; null when it succeeded. */
  lastError: { code: string; message: string } | null
}

const HOST_KEY_TYPES = new Set([
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'ssh-rsa',
])

function invalid(message: string, data: Record<string, unknown> = {}): FleetkitError {
  return new FleetkitError('ARCHIVE_REMOTE_INVALID', message, {
    actions: [
      'fleetkit db archive remote add ssh://backup@vault.example.net/srv/fleetkit-archive --host-key "$(ssh-keyscan -t ed25519 vault.example.net | grep -v \'^#\')" --identity /root/.ssh/fleetkit-archive',
    ],
    data,
  })
}

/** ssh://user@host[:port]/absolute/path: no password, a path of letters, digits and . _ - / with no `..`. */
export function parseRemoteUrl(text: string): Pick<ArchiveRemote, 'url' | 'user' | 'host' | 'port' | 'path'> {
  const shown = JSON.stringify(text.slice(0, 200))
  // URL parsing would resolve a `..` away silently: a path that says it is refused instead.
  if (/\/\.\.?(\/|$)/.test(text))
    throw invalid(`${shown}: the path must be absolute, of letters, digits and . _ - / (no ..)`)
  let url: URL
  try {
    url = new URL(text.trim())
  } catch {
    throw invalid(`${shown} is not an ssh:// URL`)
  }
  if (url.protocol !== 'ssh:') throw invalid(`${shown} is not an ssh:// URL`)
  if (url.password !== '') throw invalid('the archive URL holds a password: fleetkit logs in with a key (--identity)')
  const user = decodeURIComponent(url.username)
  if (!/^[A-Za-z0-9._][A-Za-z0-9._-]{0,63}$/.test(user)) throw invalid(`${shown} names no user (ssh://USER@host/path)`)
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  if (host === '') throw invalid(`${shown} names no host`)
  const port = url.port === '' ? 22 : Number(url.port)
  const path = decodeURIComponent(url.pathname).replace(/\/+$/, '')
  if (!/^\/[A-Za-z0-9._/-]+$/.test(path) || path.split('/').includes('..') || url.search !== '' || url.hash !== '')
    throw invalid(`${shown}: the path must be absolute, of letters, digits and . _ - / (no ..)`)
  return { url: `ssh://${user}@${url.host}${path}`, user, host, port, path }
}

/**
 * A known_hosts line (`host TYPE BASE64 [comment]`) or a bare `TYPE BASE64`: the key's type must be one
 * ssh uses for hosts and its blob must say the same type; a host field that is not hashed must name this
 * host (`host` for port 22, `[host]:port` otherwise), so the key of another machine is not pinned by mistake.
 */
export function parseHostKey(line: string, host: string, port: number): string {
  const fields = line.trim().split(/\s+/)
  const at = fields.findIndex((f) => HOST_KEY_TYPES.has(f))
  if (at < 0 || at > 1 || fields[at + 1] === undefined)
    throw invalid('--host-key is not a known_hosts line or "TYPE BASE64" of an SSH host key')
  const type = fields[at]!
  const blob = Buffer.from(fields[at + 1]!, 'base64')
  const named = blob.length > 4 ? blob.subarray(4, 4 + blob.readUInt32BE(0)).toString('latin1') : ''
  if (named !== type) throw invalid(`--host-key: the key's bytes are not a ${type} key`)
  if (at === 1 && !fields[0]!.startsWith('|')) {
    const want = port === 22 ? [host, `[${host}]:22`] : [`[${host}]:${port}`]
    const names = fields[0]!.split(',')
    if (!names.some((n) => want.includes(n)))
      throw invalid(`--host-key is the key of ${fields[0]!.slice(0, 100)}, not of ${want[0]}`, { host, port })
  }
  return `${type} ${blob.toString('base64')}`
}

/** The identity file must be a readable regular file; its path is recorded, never its contents. */
async function checkIdentityFile(path: string): Promise<string> {
  if (!path.startsWith('/')) throw invalid(`--identity ${JSON.stringify(path.slice(0, 200))} is not an absolute path`)
  const info = await stat(path).catch(() => undefined)
  if (!info?.isFile()) throw invalid(`--identity ${path} is not a file here`, { identityFile: path })
  await readFile(path).catch((error: Error) => {
    throw invalid(`--identity ${path} cannot be read: ${error.message}`, { identityFile: path })
  })
  return path
}

/** The remote as `remote add` and `fetch` are given it: URL, host key line and identity file, each checked. */
export async function checkedArchiveRemote(
  given: { url: string; hostKeyLine: string; identityFile: string },
  now: Date,
): Promise<ArchiveRemote> {
  const where = parseRemoteUrl(given.url)
  return {
    ...where,
    hostKey: parseHostKey(given.hostKeyLine, where.host, where.port),
    identityFile: await checkIdentityFile(given.identityFile),
    addedAt: now.toISOString(),
  }
}

function remoteFile(paths: EmbeddedServerPaths): string {
  return join(paths.root, 'archive-remote.json')
}

function shipStatusFile(paths: EmbeddedServerPaths): string {
  return join(paths.root, 'archive-ship.json')
}

async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as unknown
  } catch {
    return undefined
  }
}

export async function readArchiveRemote(paths: EmbeddedServerPaths): Promise<ArchiveRemote | undefined> {
  const parsed = (await readJson(remoteFile(paths))) as Partial<ArchiveRemote> | undefined
  if (
    typeof parsed?.url !== 'string' ||
    typeof parsed.hostKey !== 'string' ||
    typeof parsed.identityFile !== 'string' ||
    typeof parsed.addedAt !== 'string'
  )
    return undefined
  // Parsed again: a file edited by hand is held to what `remote add` checks.
  return {
    ...parseRemoteUrl(parsed.url),
    hostKey: parsed.hostKey,
    identityFile: parsed.identityFile,
    addedAt: parsed.addedAt,
  }
}

export function writeArchiveRemote(paths: EmbeddedServerPaths, remote: ArchiveRemote): Promise<void> {
  return writeStateJsonFile(remoteFile(paths), remote)
}

/** The remote's record and the last ship's status as their files hold them (undefined: no such file). */
export interface RemoteRecordFiles {
  remote: unknown
  ship: unknown
}

/** Read before `remote add` or `remove` changes them, to put back when the change cannot be recorded. */
export async function readRemoteRecordFiles(paths: EmbeddedServerPaths): Promise<RemoteRecordFiles> {
  return { remote: await readJson(remoteFile(paths)), ship: await readJson(shipStatusFile(paths)) }
}

/** Puts both files back as `readRemoteRecordFiles` found them: written whole again, or removed. */
export async function putBackRemoteRecordFiles(paths: EmbeddedServerPaths, files: RemoteRecordFiles): Promise<void> {
  for (const [file, value] of [
    [remoteFile(paths), files.remote],
    [shipStatusFile(paths), files.ship],
  ] as const) {
    if (value === undefined) await rm(file, { force: true })
    else await writeStateJsonFile(file, value)
  }
}

/** Forgets the remote and what the last ship did (`db archive remote remove`); the remote's files stay. */
export async function removeArchiveRemote(paths: EmbeddedServerPaths): Promise<void> {
  // The record first: without it nothing ships, whatever becomes of the status file.
  await rm(remoteFile(paths), { force: true })
  await rm(shipStatusFile(paths), { force: true })
}

export async function readShipStatus(paths: EmbeddedServerPaths): Promise<ShipStatus | undefined> {
  const parsed = (await readJson(shipStatusFile(paths))) as Partial<ShipStatus> | undefined
  return typeof parsed?.lastAttemptAt === 'string' ? (parsed as ShipStatus) : undefined
}

export function writeShipStatus(paths: EmbeddedServerPaths, status: ShipStatus): Promise<void> {
  return writeStateJsonFile(shipStatusFile(paths), status)
}
