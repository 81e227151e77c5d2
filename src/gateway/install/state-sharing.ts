// Who owns the state directory once `fleetkit gateway install` ran: the gateway's account, with its
// group sharing it (setgid directories), so the service, root and the group's members use one
// database and one PKI. The rules, per path, and the walk that applies them.
import { chmod, lchown, lstat, readdir } from 'node:fs/promises'
import { join, relative, sep } from 'node:path'

export interface Ids {
  uid: number
  gid: number
}

export interface OwnershipChange {
  path: string
  uid: number
  gid: number
  /** The new mode, or undefined to keep it (links, files whose mode is theirs). */
  mode?: number
  /** Owned by another account before (root's state taken over). */
  foreign: boolean
}

/** Files 0600 in root's state that the group reads in a shared one (src/store/embedded/state-json-file.ts). */
const GROUP_READ_FILES = new Set(
  ['password', 'archive.json', 'archive-remote.json', 'archive-ship.json'].map((name) => join('postgres', name)),
)

/**
 * The mode a path of a shared state must have, undefined to keep its own: directories 2770
 * (setgid: what is created in them is the group's), the PKI directory 2750 (members read the CA
 * certificate and bundle; the gateway refuses a PKI directory others may write), the data directory
 * 0750 (members read postmaster.pid; PostgreSQL accepts no more), the database password and the
 * archive's records (archive.json, archive-remote.json, archive-ship.json: the gateway's gauges read
 * them) 0640.
 * Inside the data directory and the PKI directory, modes stay as they are (keys stay 0600).
 */
function sharedMode(rel: string, isDirectory: boolean): number | undefined {
  const parts = rel === '' ? [] : rel.split(sep)
  const [top, second] = parts
  if (top === 'postgres' && second !== undefined && second.startsWith('data')) {
    return parts.length === 2 && second === 'data' ? 0o750 : undefined
  }
  if (top === 'pki') return parts.length === 1 ? 0o2750 : undefined
  if (top === 'postgres' && second === 'tmp') return parts.length === 2 ? 0o700 : undefined
  if (GROUP_READ_FILES.has(rel)) return 0o640
  if (rel === join('postgres', 'server.log')) return 0o640
  return isDirectory ? 0o2770 : undefined
}

/** The mode a path gets back when the state is returned to root: no group bits, no setgid. */
function privateMode(rel: string, isDirectory: boolean, mode: number): number | undefined {
  if (GROUP_READ_FILES.has(rel)) return 0o600
  if (!isDirectory) return undefined
  return mode & 0o7777 & ~0o2070
}

interface Target {
  ids: (rel: string) => Ids
  mode: (rel: string, isDirectory: boolean, mode: number) => number | undefined
}

/** Every change the state directory needs to match `target`; nothing is changed. */
async function planChanges(stateDir: string, target: Target): Promise<OwnershipChange[]> {
  const changes: OwnershipChange[] = []
  const visit = async (path: string): Promise<void> => {
    const info = await lstat(path)
    const rel = relative(stateDir, path)
    const want = target.ids(rel)
    const link = info.isSymbolicLink()
    const mode = link ? undefined : target.mode(rel, info.isDirectory(), info.mode)
    const modeChanges = mode !== undefined && (info.mode & 0o7777) !== mode
    if (info.uid !== want.uid || info.gid !== want.gid || modeChanges) {
      changes.push({
        path,
        uid: want.uid,
        gid: want.gid,
        ...(modeChanges ? { mode } : {}),
        foreign: info.uid !== want.uid,
      })
    }
    if (info.isDirectory()) for (const name of (await readdir(path)).sort()) await visit(join(path, name))
  }
  await visit(stateDir)
  return changes
}

/** What sharing `stateDir` with `account` changes (owner, group, modes). */
export function planSharedState(stateDir: string, account: Ids): Promise<OwnershipChange[]> {
  return planChanges(stateDir, { ids: () => account, mode: (rel, dir) => sharedMode(rel, dir) })
}

/**
 * What giving `path` (a directory and all it holds, or one file) to `ids` changes, modes kept; nothing when it
 * does not exist. For what the account must own beside the state: the WAL archive, the archive's SSH key.
 */
export async function planOwnedTree(path: string, ids: Ids): Promise<OwnershipChange[]> {
  if (!(await lstat(path).catch(() => undefined))) return []
  return planChanges(path, { ids: () => ids, mode: () => undefined })
}

/** What giving `stateDir` back to root changes: the data directory to `postgres`, as root's own state has it. */
export function planRootState(stateDir: string, postgres: Ids): Promise<OwnershipChange[]> {
  return planChanges(stateDir, {
    ids: (rel) =>
      rel.split(sep)[0] === 'postgres' && rel.split(sep)[1]?.startsWith('data') ? postgres : { uid: 0, gid: 0 },
    mode: privateMode,
  })
}

/** Applies the changes in order (parents before what they hold); links are re-owned, never followed. */
export async function applyOwnership(changes: readonly OwnershipChange[]): Promise<void> {
  for (const change of changes) {
    await lchown(change.path, change.uid, change.gid)
    // chown clears setgid on some systems: the mode is set after it.
    if (change.mode !== undefined) await chmod(change.path, change.mode)
  }
}
