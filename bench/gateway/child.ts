// A bench child process (a client, a bare server, storm agents) that speaks in JSON lines: the
// first line it prints says it is ready; later lines answer what the bench writes to its stdin.
import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'

import { packagePath } from '../../src/package-root.js'

export interface Child {
  child: ChildProcess
  first: Record<string, unknown>
  nextLine: () => Promise<string>
}

/** Starts bench/gateway/SCRIPT and waits for its first line (its ready line), 120 s at most. */
export function startChild(script: string, env: Record<string, string>, nodeArgs: string[] = []): Promise<Child> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', packagePath('bench', 'gateway', script)], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  // Every line the child prints, in order: the first resolves start-up, the rest are read with nextLine().
  const lines: string[] = []
  const waiting: ((line: string) => void)[] = []
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const waiter = waiting.shift()
    if (waiter) waiter(line)
    else lines.push(line)
  })
  const nextLine = () =>
    new Promise<string>((resolve) => {
      const line = lines.shift()
      if (line === undefined) waiting.push(resolve)
      else resolve(line)
    })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} printed nothing within 120 s`)), 120_000)
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)))
    void nextLine().then((line) => {
      clearTimeout(timer)
      child.removeAllListeners('exit')
      resolve({ child, first: JSON.parse(line) as Record<string, unknown>, nextLine })
    })
  })
}

/** Writes one line to the child and reads its JSON answer. */
export async function ask<T>(c: Child, line: string): Promise<T> {
  c.child.stdin!.write(`${line}\n`)
  return JSON.parse(await c.nextLine()) as T
}

/** SIGTERM (or `signal`) and wait for the exit; a child already gone is left alone. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill(signal)
  await exited
}
