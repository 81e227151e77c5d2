// What a local cloud killed with SIGKILL left behind, removed by the next one before it starts: the run
// folder names its stub (`owner`: PID and which process that PID was, as the file lock records it), and a folder whose stub is gone is taken apart: the
// machines started from it (every process whose command line names the folder, each machine's PID 1 first,
// which ends everything in its PID namespace and its veth), the loop devices backed by its files, its bridge
// (named in `owner` too) and the folder. A folder without an owner (one being made right now) is left alone.
import { readFileSync } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

import { processIdentity, processIsAlive } from '../../fs/file-lock.js'
import { findInit, readdirOrNone } from './nspawn-init.js'
import { run } from './run.js'

export const RUN_DIR_PREFIX = 'fleetkit-local-cloud-'
const OWNER = 'owner'

/** Marks `dir` as the run folder of this process, whose machines are on `bridge`. */
export async function claimRunDir(dir: string, bridge: string): Promise<void> {
  const identity = (await processIdentity(process.pid)) ?? '-'
  await writeFile(join(dir, OWNER), `${process.pid} ${identity} ${bridge}\n`, { mode: 0o600 })
}

/** Takes apart the run folders in `tmp` whose stub is gone; returns them. */
export async function removeDeadRuns(options: { tmp: string; log?: (line: string) => void }): Promise<string[]> {
  const runs = []
  for (const name of readdirOrNone(options.tmp).filter((n) => n.startsWith(RUN_DIR_PREFIX))) {
    const owner = await ownerOf(join(options.tmp, name))
    if (owner) runs.push({ dir: join(options.tmp, name), ...owner })
  }
  const liveBridges = new Set(runs.filter((r) => r.alive).map((r) => r.bridge))
  const dead = runs.filter((r) => !r.alive)
  for (const { dir, bridge } of dead) {
    options.log?.(`removing what a stub killed before it cleaned up left: ${dir}, its machines and bridge ${bridge}`)
    await stopProcessesNaming(dir)
    await detachLoopDevicesUnder(dir)
    if (!liveBridges.has(bridge) && (await run('ip', ['link', 'show', bridge])).code === 0)
      await run('ip', ['link', 'delete', bridge])
    await rm(dir, { recursive: true, force: true })
  }
  return dead.map((r) => r.dir)
}

/** The stub a run folder names, and whether it is alive; undefined when it names none (being made, or not a run). */
async function ownerOf(dir: string): Promise<{ alive: boolean; bridge: string } | undefined> {
  let text: string
  try {
    text = readFileSync(join(dir, OWNER), 'utf8')
  } catch {
    return undefined
  }
  const [pid, identity, bridge] = text.trim().split(' ')
  if (!pid || !/^\d+$/.test(pid) || !identity || !bridge || !/^[A-Za-z0-9_.-]{1,15}$/.test(bridge)) return undefined
  // A PID alone could be another process's by now (a reboot, a wrap): which process it was must match too.
  const alive = identity === '-' ? processIsAlive(Number(pid)) : (await processIdentity(Number(pid))) === identity
  return { alive, bridge }
}

/** Kills every process whose command line names `dir`: a machine's PID 1 first (its whole namespace ends). */
async function stopProcessesNaming(dir: string): Promise<void> {
  const pids = readdirOrNone('/proc')
    .filter((p) => /^\d+$/.test(p))
    .map(Number)
    .filter((pid) => pid !== process.pid && cmdlineOf(pid).includes(dir))
  for (const pid of pids) {
    const init = findInit(pid)
    if (init) kill(init)
  }
  for (const pid of pids) kill(pid)
  const deadline = Date.now() + 10_000
  while (pids.some(running) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
}

async function detachLoopDevicesUnder(dir: string): Promise<void> {
  const listed = await run('losetup', ['--list', '--noheadings', '--raw', '--output', 'NAME,BACK-FILE'])
  for (const line of listed.stdout.split('\n')) {
    const [device, file] = line.trim().split(' ')
    if (device && file?.startsWith(`${dir}/`)) await run('losetup', ['-d', device])
  }
}

function cmdlineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')
  } catch {
    return ''
  }
}

/** Whether `pid` is a process that has not ended (a zombie has: only its parent's wait is left). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2))
  } catch {
    return false
  }
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    /* gone already */
  }
}
