// Runs a host command (nft, systemctl, docker) with a timeout and no shell; injected
// so tests fake the host's answers.
import { execFile } from 'node:child_process'

export interface CommandResult {
  /** Exit status; null when the command could not start (for example ENOENT). */
  exitCode: number | null
  stdout: string
  stderr: string
  error?: string
}

export type CommandRunner = (command: string, args: readonly string[]) => Promise<CommandResult>

export function systemCommandRunner(timeoutMs = 5000): CommandRunner {
  return (command, args) =>
    new Promise((resolve) => {
      execFile(
        command,
        [...args],
        {
          timeout: timeoutMs,
          maxBuffer: 1 << 20,
          env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' },
        },
        (error, stdout, stderr) => {
          if (!error) return resolve({ exitCode: 0, stdout, stderr })
          const code = (error as NodeJS.ErrnoException).code
          if (typeof code === 'number') return resolve({ exitCode: code, stdout, stderr })
          resolve({ exitCode: null, stdout, stderr, error: typeof code === 'string' ? code : error.message })
        },
      )
    })
}
