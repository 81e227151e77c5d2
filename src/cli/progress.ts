// Progress of long steps on a terminal: one line per step with its elapsed time, redrawn in
// place while it runs. Writes only to a TTY stderr and never under --json, so logs and pipes stay clean.
import { type Clock, systemClock } from '../config/clock.js'

interface ProgressStream {
  isTTY?: boolean
  write(chunk: string): unknown
}

export interface ProgressTimers {
  setInterval(callback: () => void, ms: number): unknown
  clearInterval(handle: unknown): void
}

export interface ProgressOptions {
  /** Defaults to process.stderr. */
  stream?: ProgressStream
  /** False under --json: then nothing is ever written. */
  enabled?: boolean
  clock?: Clock
  /** How the line is redrawn while a step runs; tests pass their own and tick by hand. */
  timers?: ProgressTimers
  redrawMs?: number
}

export interface Progress {
  /** Ends the step before (if any) as done and starts this one. Pass it as `progress` to a library. */
  step(message: string): void
  /** Ends the current step as done. */
  done(): void
  /** Ends the current step as failed (or interrupted). */
  fail(): void
  /** Whether anything is written at all. */
  readonly active: boolean
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']
const CLEAR_LINE = '\r\x1b[2K'

const nodeTimers: ProgressTimers = {
  // unref: a spinner must never keep the process alive.
  setInterval: (callback, ms) => setInterval(callback, ms).unref(),
  clearInterval: (handle) => clearInterval(handle as NodeJS.Timeout),
}

export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, ms) / 1000
  if (seconds < 60) return `${seconds.toFixed(1)}s`
  const whole = Math.floor(seconds)
  return `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, '0')}s`
}

export function createProgress(options: ProgressOptions = {}): Progress {
  const stream = options.stream ?? process.stderr
  const active = (options.enabled ?? true) && stream.isTTY === true
  if (!active) return { step: () => {}, done: () => {}, fail: () => {}, active: false }
  const clock = options.clock ?? systemClock
  const timers = options.timers ?? nodeTimers
  let current: { message: string; startedAt: number; frame: number; ticker: unknown } | undefined

  const elapsed = () => formatElapsed(clock.now().getTime() - current!.startedAt)
  const draw = () => {
    if (!current) return
    stream.write(`${CLEAR_LINE}${FRAMES[current.frame % FRAMES.length]} ${current.message} (${elapsed()})`)
  }
  const finish = (mark: string) => {
    if (!current) return
    timers.clearInterval(current.ticker)
    stream.write(`${CLEAR_LINE}${mark} ${current.message} (${elapsed()})\n`)
    current = undefined
  }
  return {
    active: true,
    step(message) {
      finish('✔')
      const ticker = timers.setInterval(() => {
        if (!current) return
        current.frame += 1
        draw()
      }, options.redrawMs ?? 100)
      current = { message, startedAt: clock.now().getTime(), frame: 0, ticker }
      draw()
    },
    done: () => finish('✔'),
    fail: () => finish('✖'),
  }
}
