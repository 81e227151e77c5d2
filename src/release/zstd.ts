// Compresses and decompresses with the system `zstd` (Node.js 20 has no zstd), with a
// bound on what decompression may produce so a hostile archive cannot fill memory.
import { spawn } from 'node:child_process'

import { FleetkitError } from '../checks/fleetkit-error.js'

/** Fixed level and one thread: the same input gives the same bytes with the same zstd. */
const COMPRESS_ARGS = ['-q', '-c', '-19', '--single-thread']

export class OutputTooLargeError extends Error {}

function runZstd(args: string[], input: Uint8Array, maxOutput: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('zstd', args, { stdio: ['pipe', 'pipe', 'pipe'] })
    const chunks: Buffer[] = []
    let length = 0
    let stderr = ''
    let tooLarge = false
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') {
        reject(
          new FleetkitError('RELEASE_TOOL_MISSING', 'zstd is not installed', { actions: ['apt-get install zstd'] }),
        )
      } else reject(error)
    })
    child.stdout.on('data', (chunk: Buffer) => {
      length += chunk.length
      if (length > maxOutput) {
        tooLarge = true
        child.kill('SIGKILL')
        return
      }
      chunks.push(chunk)
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
    })
    // zstd may exit before reading all input (bad data, killed): ignore EPIPE on stdin.
    child.stdin.on('error', () => undefined)
    child.on('close', (code) => {
      if (tooLarge) reject(new OutputTooLargeError(`zstd output exceeds ${maxOutput} bytes`))
      else if (code === 0) resolve(Buffer.concat(chunks))
      else reject(new Error(`zstd ${args.join(' ')} failed: ${stderr.trim().split('\n')[0] ?? `exit ${code}`}`))
    })
    child.stdin.end(Buffer.from(input.buffer, input.byteOffset, input.length))
  })
}

export function zstdCompress(input: Uint8Array): Promise<Buffer> {
  return runZstd(COMPRESS_ARGS, input, Number.MAX_SAFE_INTEGER)
}

export function zstdDecompress(input: Uint8Array, maxOutput: number): Promise<Buffer> {
  return runZstd(['-q', '-d', '-c'], input, maxOutput)
}
