// The commands `fleetkit gateway install` runs on this machine (useradd, systemctl, getent), behind
// one injectable function so the rules are tested without touching the machine.
import { execFile } from 'node:child_process'

export interface RunResult {
  code: number
  stdout: string
  stderr: string
}

export type HostRunner = (file: string, args: readonly string[]) => Promise<RunResult>

/** Runs a program without a shell; never throws for a non-zero exit (a missing program is exit 127). */
export const runOnHost: HostRunner = (file, args) =>
  new Promise((resolve) => {
    execFile(file, [...args], { encoding: 'utf8', timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 127) : 0
      resolve({ code, stdout, stderr: stderr || (error && typeof error.code !== 'number' ? error.message : '') })
    })
  })

/** uid and gid of a user, or of a group (gid twice), from the system's databases. */
export async function lookupIds(
  run: HostRunner,
  database: 'passwd' | 'group',
  name: string,
): Promise<{ uid: number; gid: number } | undefined> {
  const result = await run('getent', [database, name])
  if (result.code !== 0) return undefined
  const fields = result.stdout.trim().split('\n')[0]?.split(':') ?? []
  const first = Number.parseInt(fields[2] ?? '', 10)
  const second = database === 'passwd' ? Number.parseInt(fields[3] ?? '', 10) : first
  return Number.isInteger(first) && Number.isInteger(second) ? { uid: first, gid: second } : undefined
}
