// Finding a running embedded server: PostgreSQL's own postmaster.pid (the final word on
// whether one runs) and fleetkit's server.json (which PID and port the starter saw).
import { readFileSync, realpathSync } from 'node:fs'
import { chmod, chown, readFile, rename, stat, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'

import { processIsAlive } from '../../fs/file-lock.js'
import type { EmbeddedServerPaths } from './paths.js'

export interface PostmasterPid {
  pid: number
  port: number
  status: string
}

export interface ServerRecord {
  pid: number
  port: number
  dataDir: string
  startedAt: string
  binaries: string
}

/** postmaster.pid: line 1 the PID, line 4 the port, line 8 the status (starting, ready, stopping). */
export async function readPostmasterPid(dataDir: string): Promise<PostmasterPid | undefined> {
  let text: string
  try {
    text = await readFile(join(dataDir, 'postmaster.pid'), 'utf8')
  } catch {
    return undefined
  }
  const lines = text.split('\n')
  const pid = Number.parseInt(lines[0] ?? '', 10)
  const port = Number.parseInt(lines[3] ?? '', 10)
  if (!Number.isInteger(pid) || pid <= 0) return undefined
  return { pid, port: Number.isInteger(port) ? port : 0, status: (lines[7] ?? '').trim() }
}

/**
 * A live process that is the PostgreSQL server of `dataDir`: not another program, nor another
 * PostgreSQL server, that reused a stale PID (PIDs wrap at 32768 on many machines). A postmaster's
 * working directory is its data directory; where /proc cannot tell (another OS, no permission), the
 * process name alone decides.
 */
export function isPostgresProcess(pid: number, dataDir: string): boolean {
  if (!processIsAlive(pid)) return false
  if (process.platform !== 'linux') return true
  try {
    if (!readFileSync(`/proc/${pid}/comm`, 'utf8').trim().startsWith('postgres')) return false
  } catch {
    return true
  }
  try {
    return realpathSync(`/proc/${pid}/cwd`) === realpathSync(dataDir)
  } catch (error) {
    // Not ours to look at: the name said postgres. Gone meanwhile, or no such data directory: not it.
    const code = (error as NodeJS.ErrnoException).code
    return code === 'EACCES' || code === 'EPERM'
  }
}

/** The fast path: server.json and postmaster.pid agree on a live, ready server. */
export async function findReadyServer(paths: EmbeddedServerPaths): Promise<PostmasterPid | undefined> {
  const record = await readServerRecord(paths.serverFile)
  if (!record) return undefined
  const pm = await readPostmasterPid(paths.dataDir)
  if (!pm || pm.pid !== record.pid || pm.port !== record.port || pm.status !== 'ready') return undefined
  return isPostgresProcess(pm.pid, paths.dataDir) ? pm : undefined
}

export async function readServerRecord(path: string): Promise<ServerRecord | undefined> {
  return parseServerRecord(await readFile(path, 'utf8').catch(() => ''))
}

/** readServerRecord for a constructor (a pool's new connection): one small file, read at once. */
export function readServerRecordSync(path: string): ServerRecord | undefined {
  try {
    return parseServerRecord(readFileSync(path, 'utf8'))
  } catch {
    return undefined
  }
}

function parseServerRecord(text: string): ServerRecord | undefined {
  try {
    const parsed = JSON.parse(text) as Partial<ServerRecord>
    return Number.isInteger(parsed.pid) && Number.isInteger(parsed.port) ? (parsed as ServerRecord) : undefined
  } catch {
    return undefined
  }
}

/** Written only when PID or port changed, atomically: readers never see half a record. */
export async function writeServerRecord(path: string, record: ServerRecord): Promise<void> {
  const previous = await readServerRecord(path)
  if (previous?.pid === record.pid && previous.port === record.port) return
  const temp = `${path}.${process.pid}.tmp`
  await writeFile(temp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o644 })
  // Readable by every fleetkit process whatever the umask (the gateway's unit has UMask=0077).
  await chmod(temp, 0o644)
  // Root gives it to a shared state's account, which must be able to replace it later.
  const dir = await stat(dirname(path)).catch(() => undefined)
  if (dir && (dir.mode & 0o2000) !== 0 && dir.uid !== 0 && process.getuid?.() === 0) await chown(temp, dir.uid, dir.gid)
  await rename(temp, path)
}
