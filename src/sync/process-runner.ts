// Runs a tool (ansible) to completion and collects its output, or, when the AbortSignal fires,
// ends it and every process it started (its own process group) before rejecting with the reason.
import { spawn } from 'node:child_process'

import type { Env } from '../config/state-dir.js'
import { leftoverGroupMembers } from '../store/embedded/process-group.js'

export interface RunProcessOptions {
  env: Env
  cwd: string
  signal?: AbortSignal
  /** The tool fails (ok: false) after this long; its process group is ended. */
  timeoutMs?: number
  /** Output kept per stream; the rest is dropped. */
  maxBytes?: number
  /** Between SIGTERM and SIGKILL to the group. */
  killGraceMs?: number
  /** Told the process id (its process group) once it started: sync records it so a resume can end an orphan. */
  onSpawn?: (pid: number) => void
}

export interface ProcessResult {
  ok: boolean
  exitCode: number | null
  stdout: string
  stderr: string
}

/** Thrown when the command is not found; the caller turns it into its own coded error. */
export class CommandNotFoundError extends Error {
  constructor(readonly command: string) {
    super(`${command} is not installed (not found on PATH)`)
    this.name = 'CommandNotFoundError'
  }
}

export function runProcess(
  command: string,
  args: readonly string[],
  options: RunProcessOptions,
): Promise<ProcessResult> {
  const { signal } = options
  if (signal?.aborted) return Promise.reject(signal.reason)
  const maxBytes = options.maxBytes ?? 16 * 1024 * 1024
  return new Promise((resolvePromise, reject) => {
    // detached: the tool leads its own process group, so ending the group also ends whatever it
    // started (ansible's workers, a shell's children), and a terminal's Ctrl-C reaches fleetkit
    // alone, which then ends the tool in order.
    const child = spawn(command, args, {
      env: options.env as NodeJS.ProcessEnv,
      cwd: options.cwd,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    if (child.pid !== undefined) options.onSpawn?.(child.pid)
    const out: Buffer[] = []
    const err: Buffer[] = []
    const collect = (into: Buffer[]) => {
      let kept = 0
      return (chunk: Buffer) => {
        if (kept >= maxBytes) return
        into.push(chunk.subarray(0, maxBytes - kept))
        kept += chunk.length
      }
    }
    child.stdout.on('data', collect(out))
    child.stderr.on('data', collect(err))

    let killTimer: NodeJS.Timeout | undefined
    let timedOut = false
    const endGroup = () => {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
      signalGroup(child.pid, 'SIGTERM')
      killTimer ??= setTimeout(() => signalGroup(child.pid!, 'SIGKILL'), options.killGraceMs ?? 2_000)
    }
    const onAbort = () => endGroup()
    signal?.addEventListener('abort', onAbort, { once: true })
    const timeout =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true
            endGroup()
          }, options.timeoutMs)

    const cleanUp = () => {
      signal?.removeEventListener('abort', onAbort)
      if (timeout) clearTimeout(timeout)
      if (killTimer) clearTimeout(killTimer)
    }
    child.once('error', (error: NodeJS.ErrnoException) => {
      cleanUp()
      reject(error.code === 'ENOENT' ? new CommandNotFoundError(command) : error)
    })
    // 'close' comes after the pipes are drained; a tool's children that kept them open are gone by then too.
    child.once('close', (exitCode) => {
      cleanUp()
      // The leader may exit on SIGTERM before the rest of its group: finish the job, but only while
      // members of its group remain (its reaped PID may already lead a stranger's group).
      if (child.pid !== undefined && (signal?.aborted || timedOut) && leftoverGroupMembers(child.pid))
        signalGroup(child.pid, 'SIGKILL')
      if (signal?.aborted) {
        reject(signal.reason)
        return
      }
      const stderr =
        Buffer.concat(err).toString('utf8') +
        (timedOut ? `\nERROR! ${command} timed out after ${Math.round(options.timeoutMs! / 1000)} s` : '')
      resolvePromise({ ok: exitCode === 0 && !timedOut, exitCode, stdout: Buffer.concat(out).toString('utf8'), stderr })
    })
  })
}

function signalGroup(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(-pid, name)
  } catch (error) {
    // ESRCH: the group is already gone, which is what we wanted.
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error
  }
}
