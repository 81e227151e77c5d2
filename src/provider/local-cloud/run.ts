// The programs the local cloud runs on this machine (ip, losetup, mkfs, debootstrap, nsenter): without a
// shell, output captured, a non-zero exit thrown with the program's last words.
import { execFile, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'

export interface RunResult {
  code: number
  stdout: string
  stderr: string
}

/** Runs FILE; never throws (a missing program is exit 127). */
export function run(
  file: string,
  args: readonly string[],
  timeoutMs = 120_000,
  signal?: AbortSignal,
): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      file,
      [...args],
      { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, ...(signal ? { signal } : {}) },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 127) : 0
        resolve({ code, stdout, stderr: stderr || (error && typeof error.code !== 'number' ? error.message : '') })
      },
    )
  })
}

/** Runs FILE and returns its output; throws an Error naming the command and its stderr's last line on failure. */
export async function runOk(
  file: string,
  args: readonly string[],
  timeoutMs?: number,
  signal?: AbortSignal,
): Promise<string> {
  const result = await run(file, args, timeoutMs, signal)
  if (result.code !== 0) {
    const last = result.stderr.trim().split('\n').slice(-2).join(' | ')
    throw new Error(`${file} ${args.join(' ')} exited ${result.code}: ${last}`)
  }
  return result.stdout
}

/**
 * Runs FILE, handing each line it prints (stdout and stderr) to onLine as it comes: for a program that takes
 * minutes (debootstrap). Throws like runOk, with the last lines it printed.
 */
export function runStreaming(
  file: string,
  args: readonly string[],
  onLine: (line: string) => void,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, [...args], { stdio: ['ignore', 'pipe', 'pipe'], ...(signal ? { signal } : {}) })
    const last: string[] = []
    const take = (line: string) => {
      last.push(line)
      if (last.length > 3) last.shift()
      onLine(line)
    }
    createInterface({ input: child.stdout }).on('line', take)
    createInterface({ input: child.stderr }).on('line', take)
    child.on('error', reject)
    child.on('close', (code, killed) => {
      if (code === 0) resolve()
      else reject(new Error(`${file} exited ${code ?? killed}: ${last.join(' | ')}`))
    })
  })
}
