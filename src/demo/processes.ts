// The demo's child processes (the gateway, the seeds, the agents): each the leader of its own process
// group, recorded in the workspace manifest before anything else, its output kept in a log file and
// its last lines in memory, and ended by its PID (the whole group) on every way out.
import { spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

import type { Workspace } from './workspace.js'

export interface DemoProcess {
  name: string
  pid: number
  child: ChildProcess
  /** The log file under the workspace (stdout and stderr). */
  logFile: string
  /** The last lines it wrote, for an error message. */
  tail(): string
  /** How it ended; undefined while it runs. */
  exited(): { code: number | null; signal: NodeJS.Signals | null } | undefined
  /** Resolves when it has ended. */
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Stops the process (SIGSTOP): the demo's way of cutting a node off without ending it. */
  freeze(): void
  /** SIGTERM to its group, then SIGKILL after `graceMs`; resolves once it has ended. */
  stop(graceMs?: number): Promise<void>
}

export interface StartOptions {
  env: NodeJS.ProcessEnv
  cwd?: string
  /** Called with every line of standard output. */
  onLine?: (line: string) => void
}

const TAIL_LINES = 40

export async function startDemoProcess(
  workspace: Workspace,
  name: string,
  command: string,
  args: readonly string[],
  options: StartOptions,
): Promise<DemoProcess> {
  const child = spawn(command, args, {
    env: options.env,
    cwd: options.cwd ?? workspace.dir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve)
    child.once('error', reject)
  })
  await spawned
  const pid = child.pid!
  await workspace.recordPid(pid)
  const logFile = join(workspace.dir, 'logs', `${name}.log`)
  const log = createWriteStream(logFile, { flags: 'a', mode: 0o600 })
  log.on('error', () => {})
  const lines: string[] = []
  const keep = (line: string) => {
    lines.push(line)
    if (lines.length > TAIL_LINES) lines.shift()
    log.write(`${line}\n`)
  }
  createInterface({ input: child.stdout! }).on('line', (line) => {
    keep(line)
    options.onLine?.(line)
  })
  createInterface({ input: child.stderr! }).on('line', keep)
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = { code, signal }
      resolve(exit)
    })
  })
  // The log closes once the pipes are drained, whichever of them ends last.
  child.once('close', () => log.end())
  // Only while the leader has not been reaped: until then its PID (the group's ID) cannot be given
  // to another process. After its exit the number may already belong to another process group
  // (PIDs wrap at 32768 on many machines), and a signal to it would hit a stranger.
  const signalGroup = (signal: NodeJS.Signals) => {
    if (exit) return
    try {
      process.kill(-pid, signal)
    } catch {
      // the group is gone
    }
  }
  return {
    name,
    pid,
    child,
    logFile,
    tail: () => lines.join('\n'),
    exited: () => exit,
    ended,
    freeze: () => signalGroup('SIGSTOP'),
    async stop(graceMs = 5000) {
      if (!exit) {
        signalGroup('SIGTERM')
        // A frozen process handles its SIGTERM only once it runs again.
        signalGroup('SIGCONT')
        const timer = setTimeout(() => signalGroup('SIGKILL'), graceMs)
        await ended
        clearTimeout(timer)
      }
    },
  }
}
