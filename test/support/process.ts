// The one way tests run a process: to completion (`runProcess`, `runProcessOk`) or in the
// background (`startProcess`), with output collected, a timeout, and no shell in between.
import { type ChildProcess, spawn } from 'node:child_process'

export interface ProcessOptions {
  cwd?: string
  /** The whole environment of the child (default: this process's); see `overlayEnv` to add to it. */
  env?: NodeJS.ProcessEnv
  /** Written to stdin, which is then closed; without it stdin is closed at once. */
  input?: string | Buffer
  /** Kills the process (SIGKILL) after this many milliseconds; the result then has `timedOut`. */
  timeoutMs?: number
  /** Run as another user (tests that run as root and need an unprivileged server). */
  uid?: number
  gid?: number
}

export interface ProcessResult {
  /** The exit status, or 1 when the process was ended by a signal (so `code === 0` means success). */
  code: number
  signal: NodeJS.Signals | null
  timedOut: boolean
  stdout: string
  stderr: string
  /** stdout as bytes, for binary output (DER, signatures). */
  stdoutBytes: Buffer
}

/** A process that ended unsuccessfully, thrown by `runProcessOk`; carries the whole result. */
export class ProcessFailed extends Error {
  readonly code: number
  readonly stdout: string
  readonly stderr: string

  constructor(
    readonly command: string,
    readonly args: string[],
    readonly result: ProcessResult,
  ) {
    const how = result.timedOut
      ? 'timed out'
      : result.signal
        ? `was killed by ${result.signal}`
        : `exited ${result.code}`
    super(`${command} ${args.join(' ')} ${how}: ${lastLines(result.stderr || result.stdout)}`)
    this.name = 'ProcessFailed'
    this.code = result.code
    this.stdout = result.stdout
    this.stderr = result.stderr
  }
}

/** This process's environment with `overrides` laid over it; a variable set to `undefined` is removed. */
export function overlayEnv(
  overrides: NodeJS.ProcessEnv = {},
  base: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base }
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name]
    else env[name] = value
  }
  return env
}

/** Runs COMMAND ARGS to its end. A non-zero exit is a result, never a throw; a missing command throws. */
export function runProcess(command: string, args: string[], options: ProcessOptions = {}): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, spawnOptions(options, ['pipe', 'pipe', 'pipe']))
    const out: Buffer[] = []
    const err: Buffer[] = []
    let timedOut = false
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true
            child.kill('SIGKILL')
          }, options.timeoutMs)
    child.stdout!.on('data', (chunk: Buffer) => out.push(chunk))
    child.stderr!.on('data', (chunk: Buffer) => err.push(chunk))
    // A child that exits without reading its stdin must not crash the test with EPIPE.
    child.stdin!.on('error', () => undefined)
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(new Error(`cannot run ${command}: ${error.message}`, { cause: error }))
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const stdoutBytes = Buffer.concat(out)
      resolve({
        code: code ?? 1,
        signal,
        timedOut,
        stdout: stdoutBytes.toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        stdoutBytes,
      })
    })
    child.stdin!.end(options.input)
  })
}

/** Runs COMMAND ARGS to its end and throws `ProcessFailed` (with its stderr) unless it exits 0. */
export async function runProcessOk(
  command: string,
  args: string[],
  options: ProcessOptions = {},
): Promise<ProcessResult> {
  const result = await runProcess(command, args, options)
  if (result.code !== 0 || result.signal !== null) throw new ProcessFailed(command, args, result)
  return result
}

export interface RunningProcess {
  readonly child: ChildProcess
  readonly pid: number
  /** Everything written so far. */
  stdout(): string
  stderr(): string
  /** Set once the process has ended: how it ended. */
  exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined
  /** Resolves when the process has ended. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Sends `signal` (default SIGTERM), then SIGKILL after `graceMs`; resolves when it has ended. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>
}

export interface StartOptions extends Omit<ProcessOptions, 'input' | 'timeoutMs'> {
  /** Keep only the last this many characters of each stream (a server that logs for a whole suite). */
  keepChars?: number
}

/** Starts COMMAND ARGS in the background with its output collected; stop it with `stop()`. */
export function startProcess(command: string, args: string[], options: StartOptions = {}): RunningProcess {
  const child = spawn(command, args, spawnOptions(options, ['ignore', 'pipe', 'pipe']))
  let out = ''
  let err = ''
  let ended: { code: number | null; signal: NodeJS.Signals | null } | undefined
  const keep = (text: string) => (options.keepChars === undefined ? text : text.slice(-options.keepChars))
  child.stdout!.on('data', (chunk: Buffer) => {
    out = keep(out + chunk.toString())
  })
  child.stderr!.on('data', (chunk: Buffer) => {
    err = keep(err + chunk.toString())
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('error', (error) => {
      err += `cannot run ${command}: ${error.message}\n`
      ended = { code: null, signal: null }
      resolve(ended)
    })
    child.on('exit', (code, signal) => {
      ended = { code, signal }
      resolve(ended)
    })
  })
  // A test that fails before stopping its process must not leave it running after mocha ends.
  const killOnExit = () => {
    child.kill('SIGKILL')
  }
  process.once('exit', killOnExit)
  void exited.then(() => process.removeListener('exit', killOnExit))
  return {
    child,
    pid: child.pid ?? 0,
    stdout: () => out,
    stderr: () => err,
    exit: () => ended,
    exited,
    async stop(signal = 'SIGTERM', graceMs = 10_000) {
      if (ended) return
      child.kill(signal)
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
      await exited
      clearTimeout(timer)
    },
  }
}

function spawnOptions(options: ProcessOptions, stdio: Array<'pipe' | 'ignore'>) {
  return {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio,
    ...(options.uid === undefined ? {} : { uid: options.uid }),
    ...(options.gid === undefined ? {} : { gid: options.gid }),
  }
}

function lastLines(text: string): string {
  return text.trim().split('\n').slice(-5).join(' | ') || '(no output)'
}
