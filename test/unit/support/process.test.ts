// The test process runner: exit status, output, stdin, timeouts, environment and background processes.
import assert from 'node:assert/strict'

import { eventually } from '../../support/eventually.js'
import { overlayEnv, ProcessFailed, runProcess, runProcessOk, startProcess } from '../../support/process.js'

const node = process.execPath
const script = (code: string) => ['-e', code]

describe('the test process runner', () => {
  it('returns a non-zero exit as a result, with stdout, stderr and stdin passed through', async () => {
    const result = await runProcess(
      node,
      script(
        'process.stdin.pipe(process.stdout); process.stderr.write("warn"); process.on("exit", () => { process.exitCode = 3 })',
      ),
      { input: 'hello' },
    )
    assert.deepEqual(
      { code: result.code, stdout: result.stdout, stderr: result.stderr, signal: result.signal },
      { code: 3, stdout: 'hello', stderr: 'warn', signal: null },
    )
  })

  it('keeps binary stdout as bytes', async () => {
    const result = await runProcessOk(node, script('process.stdout.write(Buffer.from([0, 255, 128]))'))
    assert.deepEqual([...result.stdoutBytes], [0, 255, 128])
  })

  it('runProcessOk throws ProcessFailed with the exit status and the stderr', async () => {
    await assert.rejects(
      runProcessOk(node, script('console.error("no such key"); process.exit(2)')),
      (error: unknown) => {
        assert.ok(error instanceof ProcessFailed)
        assert.equal(error.code, 2)
        assert.match(error.message, /exited 2: no such key$/)
        return true
      },
    )
  })

  it('kills a process that outlives its timeout and says so', async () => {
    const result = await runProcess(node, script('setInterval(() => {}, 1000)'), { timeoutMs: 200 })
    assert.equal(result.timedOut, true)
    assert.equal(result.signal, 'SIGKILL')
    assert.notEqual(result.code, 0)
  })

  it('rejects a command that does not exist', async () => {
    await assert.rejects(
      runProcess('/nonexistent/fleetkit-no-such-program', []),
      /cannot run \/nonexistent\/fleetkit-no-such-program/,
    )
  })

  it('lays variables over the environment and removes those set to undefined', () => {
    assert.deepEqual(overlayEnv({ B: '2', C: undefined }, { A: '1', C: '3' }), { A: '1', B: '2' })
  })

  it('starts a background process, collects its output and stops it', async () => {
    const running = startProcess(
      node,
      script(
        'process.on("SIGTERM", () => { console.log("bye"); process.exit(0) }); console.log("up"); setInterval(() => {}, 1000)',
      ),
      { keepChars: 100 },
    )
    // "up" is printed after the handler is installed: wait for it before signalling.
    await eventually('the child to start', () => running.stdout().includes('up'), { intervalMs: 10, timeoutMs: 10_000 })
    await running.stop()
    assert.deepEqual(running.exit(), { code: 0, signal: null })
    assert.equal(running.stdout(), 'up\nbye\n')
  })
})
