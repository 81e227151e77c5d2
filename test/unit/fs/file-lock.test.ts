import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { LockTimeoutError, processIsAlive, withFileLock } from '../../../src/fs/file-lock.js'
import { eventually } from '../../support/eventually.js'

describe('withFileLock', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-lock-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('holds the lock with our PID while running and removes it afterwards', async () => {
    const path = join(dir, 'lock')
    const seen = await withFileLock(path, async () => readFile(path, 'utf8'))
    assert.match(seen, new RegExp(`^${process.pid} `))
    assert.ok(!existsSync(path))
  })

  it('removes the lock when the function throws', async () => {
    const path = join(dir, 'lock')
    await assert.rejects(
      withFileLock(path, async () => {
        throw new Error('boom')
      }),
      /boom/,
    )
    assert.ok(!existsSync(path))
  })

  it('serialises holders in one process', async () => {
    const path = join(dir, 'lock')
    let inside = 0
    let most = 0
    let done = 0
    // Counts the times a holder found the lock taken (it then asks whether the holder lives).
    let refused = 0
    const isAlive = (pid: number) => {
      refused++
      return processIsAlive(pid)
    }
    await Promise.all(
      Array.from({ length: 5 }, () =>
        withFileLock(
          path,
          async () => {
            inside++
            most = Math.max(most, inside)
            // Held until another holder has found it taken (or none is left): they met and waited.
            const seen = refused
            await eventually('another holder to find the lock taken', () => refused > seen || done === 4, {
              timeoutMs: 5000,
              intervalMs: 1,
            })
            inside--
            done++
          },
          { pollMs: 2, isAlive },
        ),
      ),
    )
    assert.equal(most, 1)
    assert.ok(refused >= 4, `holders found the lock taken ${refused} times`)
  })

  it('breaks a lock whose holder is dead', async () => {
    const path = join(dir, 'lock')
    await writeFile(path, '999999 0 stale\n')
    const ran = await withFileLock(path, async () => true, { isAlive: () => false, timeoutMs: 1000 })
    assert.equal(ran, true)
  })

  it('times out on a lock held by a live process, having said once whom it waits for', async () => {
    const path = join(dir, 'lock')
    await writeFile(path, `${process.pid} 0 other\n`)
    const waitedFor: number[] = []
    await assert.rejects(
      withFileLock(path, async () => true, { timeoutMs: 100, pollMs: 10, onWait: (pid) => waitedFor.push(pid) }),
      (error: unknown) => {
        assert.ok(error instanceof LockTimeoutError)
        assert.equal(error.holder, process.pid)
        return true
      },
    )
    assert.deepEqual(waitedFor, [process.pid])
    // Someone else's lock is never removed.
    assert.ok(existsSync(path))
  })

  it('processIsAlive knows this process and rejects nonsense', () => {
    assert.ok(processIsAlive(process.pid))
    assert.ok(!processIsAlive(0))
    assert.ok(!processIsAlive(-5))
  })
})
