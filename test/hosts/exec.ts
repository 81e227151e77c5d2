// Running the machine's tools for the test hosts: to completion with output collected (the
// project's process runner) or with stderr streamed as progress (long builds).
import { spawn } from 'node:child_process'

import { type ProcessOptions, type ProcessResult, runProcess, runProcessOk } from '../support/process.js'

export { runProcess as runHostCommand, runProcessOk as runHostCommandOk }
export type { ProcessOptions, ProcessResult }

/** Runs COMMAND ARGS with stderr passed through to ours (progress); throws unless it exits 0. */
export function streamHostCommand(
  command: string,
  args: string[],
  options: { timeoutMs?: number } = {},
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit'] })
    const timer =
      options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs)
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(new Error(`cannot run ${command}: ${error.message}`))
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) resolve()
      else
        reject(
          new Error(
            `${command} ${args.slice(0, 3).join(' ')} ... ${signal ? `was killed by ${signal}` : `exited ${code}`}`,
          ),
        )
    })
  })
}
