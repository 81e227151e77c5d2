// The demo's private directory under the system temp directory, and the manifest in it that names
// the demo's own PID and every process it started: what a later run needs to clean up a killed one.
import { readFileSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { writeFileAtomic } from '../fs/atomic-file.js'
import { livePostmasterPid, stopEmbeddedServer } from '../store/embedded/server.js'

const DEMO_DIR_PREFIX = 'fleetkit-demo-'
const MANIFEST = 'demo.json'

interface DemoManifest {
  ownerPid: number
  /** Every process the demo started (each the leader of its own process group). */
  pids: number[]
}

export interface Workspace {
  dir: string
  /** The state directory: the embedded PostgreSQL and the gateway's PKI. */
  stateDir: string
  pkiDir: string
  /** Records a started process, so a later run can end it if this one is killed. */
  recordPid(pid: number): Promise<void>
}

export async function createWorkspace(parent: string = tmpdir()): Promise<Workspace> {
  const dir = await mkdtemp(join(parent, DEMO_DIR_PREFIX))
  // Run as root, the embedded server runs as `postgres`, which must pass through (not list) this directory.
  await chmod(dir, 0o711)
  await mkdir(join(dir, 'logs'))
  const manifest: DemoManifest = { ownerPid: process.pid, pids: [] }
  const write = () => writeFileAtomic(join(dir, MANIFEST), `${JSON.stringify(manifest)}\n`)
  await write()
  let queue = Promise.resolve()
  const stateDir = join(dir, 'state')
  return {
    dir,
    stateDir,
    pkiDir: join(stateDir, 'pki'),
    recordPid: (pid) => {
      manifest.pids.push(pid)
      queue = queue.then(write)
      return queue
    },
  }
}

/** What the command line of a live process says; '' when it is gone or unreadable. */
function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')
  } catch {
    return ''
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function readManifest(dir: string): Promise<DemoManifest | undefined> {
  try {
    const parsed = JSON.parse(await readFile(join(dir, MANIFEST), 'utf8')) as Partial<DemoManifest>
    if (typeof parsed.ownerPid !== 'number' || !Array.isArray(parsed.pids)) return undefined
    return { ownerPid: parsed.ownerPid, pids: parsed.pids.filter((p): p is number => Number.isInteger(p) && p > 1) }
  } catch {
    return undefined
  }
}

/** SIGKILL to the process group `pid` leads, else to the process alone. */
function kill(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // gone meanwhile
    }
  }
}

/** A demo whose owner is still running `fleetkit demo` is live and left alone. */
function ownerRuns(manifest: DemoManifest): boolean {
  return manifest.ownerPid !== process.pid && alive(manifest.ownerPid) && / demo\b/.test(commandLine(manifest.ownerPid))
}

/**
 * Finds demo directories under `parent` whose demo is gone (killed, or its machine rebooted) and
 * removes them with what they left running: each recorded process whose command line still names
 * the directory (a reused PID is never touched), and the embedded PostgreSQL of its state directory.
 * Returns the directories removed.
 */
export async function cleanStaleWorkspaces(parent: string = tmpdir()): Promise<string[]> {
  const removed: string[] = []
  for (const name of await readdir(parent)) {
    if (!name.startsWith(DEMO_DIR_PREFIX)) continue
    const dir = join(parent, name)
    const manifest = await readManifest(dir)
    if (manifest && ownerRuns(manifest)) continue
    const stateDir = join(dir, 'state')
    // The gateway and the agents first (the gateway would start a stopped database again); the
    // database last, with a clean shutdown that removes its shared memory, and killed only if that fails.
    const postmaster = await livePostmasterPid(stateDir).catch(() => undefined)
    const recorded = (manifest?.pids ?? []).filter((pid) => commandLine(pid).includes(dir))
    for (const pid of recorded.filter((p) => p !== postmaster)) kill(pid)
    await stopEmbeddedServer(stateDir, { timeoutMs: 10_000 }).catch(() => undefined)
    for (const pid of recorded.filter((p) => p === postmaster && commandLine(p).includes(dir))) kill(pid)
    await rm(dir, { recursive: true, force: true })
    removed.push(dir)
  }
  return removed
}

export async function removeWorkspace(workspace: Workspace): Promise<void> {
  await rm(workspace.dir, { recursive: true, force: true })
}
