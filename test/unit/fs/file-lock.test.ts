import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { LockTimeoutError, processIdentity, processIsAlive, withFileLock } from '../../../src/fs/file-lock.js'
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

  describe('a stale lock broken by several waiters at once', () => {
    const DEAD = 999_999
    const isAlive = (pid: number) => pid !== DEAD && processIsAlive(pid)

    it('lets one breaker remove it while another waits, so the new lock is never removed', async () => {
      const path = join(dir, 'lock')
      await writeFile(path, `${DEAD} 0 stale\n`)
      let inside = 0
      let most = 0
      const done = new Set<string>()
      const waiting = new Set<string>()
      let paused = false
      let resume!: () => void
      const resumed = new Promise<void>((resolve) => (resume = resolve))
      let secondJudged = 0
      const run = (me: string, other: string, options: Parameters<typeof withFileLock>[2]) =>
        withFileLock(
          path,
          async () => {
            inside++
            most = Math.max(most, inside)
            // Held until the other holds it too (the bug), finished, or waits for this one.
            await eventually(
              'the other waiter to meet this holder',
              () => inside > 1 || done.has(other) || waiting.has(other),
              {
                timeoutMs: 5000,
                intervalMs: 1,
              },
            )
            inside--
            done.add(me)
          },
          { pollMs: 2, timeoutMs: 5000, onWait: () => waiting.add(me), ...options },
        )
      // The first breaker stops just before it removes the stale file.
      const first = run('first', 'second', {
        isAlive,
        beforeBreak: async () => {
          paused = true
          await resumed
        },
      })
      await eventually('the first breaker to pause', () => paused, { timeoutMs: 5000, intervalMs: 1 })
      // The second has judged the stale lock more than once: it waits for the first breaker (or got in).
      const second = run('second', 'first', {
        isAlive: (pid) => {
          if (pid === DEAD) secondJudged++
          return isAlive(pid)
        },
      })
      await eventually('the second waiter to judge the stale lock twice', () => secondJudged >= 2 || inside > 0, {
        timeoutMs: 5000,
        intervalMs: 1,
      })
      resume()
      await Promise.all([first, second])
      assert.equal(most, 1, 'two holders at once')
      assert.deepEqual(await readdir(dir), [], 'no lock or claim left behind')
    })

    it('gives it to one holder at a time however many waiters break it', async () => {
      for (let round = 0; round < 20; round++) {
        const path = join(dir, `lock-${round}`)
        await writeFile(path, `${DEAD} 0 stale\n`)
        let inside = 0
        let most = 0
        await Promise.all(
          Array.from({ length: 6 }, () =>
            withFileLock(
              path,
              async () => {
                inside++
                most = Math.max(most, inside)
                for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
                inside--
              },
              { isAlive, pollMs: 1, timeoutMs: 10_000 },
            ),
          ),
        )
        assert.equal(most, 1, `two holders at once in round ${round}`)
      }
      assert.deepEqual(await readdir(dir), [])
    })

    it('breaks the claim of a breaker that died holding it', async () => {
      const path = join(dir, 'lock')
      await writeFile(path, `${DEAD} 0 stale\n`)
      await writeFile(`${path}.break`, `${DEAD} 0 dead-breaker\n`)
      assert.equal(await withFileLock(path, async () => true, { isAlive, timeoutMs: 1000, pollMs: 2 }), true)
      assert.deepEqual(await readdir(dir), [])
    })
  })

  it('waits for an empty lock file (a holder still writing it), and breaks one left empty for long', async () => {
    const path = join(dir, 'lock')
    await writeFile(path, '')
    await assert.rejects(
      withFileLock(path, async () => true, { timeoutMs: 50, pollMs: 5 }),
      LockTimeoutError,
    )
    const past = new Date(Date.now() - 60_000)
    await utimes(path, past, past)
    assert.equal(await withFileLock(path, async () => true, { timeoutMs: 1000, pollMs: 5 }), true)
    assert.deepEqual(await readdir(dir), [])
  })

  describe('a holder whose PID now belongs to another process', () => {
    it("records this process's identity in its token", async () => {
      const identity = await processIdentity(process.pid)
      assert.ok(identity, 'no /proc identity on this machine')
      const path = join(dir, 'lock')
      const seen = await withFileLock(path, async () => readFile(path, 'utf8'))
      assert.equal(seen.trim().split(' ')[3], identity)
    })

    it('breaks a lock whose live PID started after the holder (a reused PID, another boot)', async () => {
      const identity = (await processIdentity(process.pid))!
      const [boot, start] = identity.split('/')
      for (const other of [`${boot}/${Number(start) + 1}`, `00000000-0000-0000-0000-000000000000/${start}`]) {
        const path = join(dir, 'lock')
        await writeFile(path, `${process.pid} 0 before ${other}\n`)
        assert.equal(await withFileLock(path, async () => true, { timeoutMs: 1000, pollMs: 2 }), true, other)
      }
    })

    it('waits for a live holder whose identity matches', async () => {
      const path = join(dir, 'lock')
      await writeFile(path, `${process.pid} 0 other ${await processIdentity(process.pid)}\n`)
      await assert.rejects(
        withFileLock(path, async () => true, { timeoutMs: 50, pollMs: 5 }),
        LockTimeoutError,
      )
      assert.ok(existsSync(path))
    })

    it('says when the lock file may be removed by hand', () => {
      assert.equal(
        new LockTimeoutError('/s/pki/.pki.lock', 4242).removeAction,
        'if PID 4242 is not a fleetkit command (ps -p 4242 -o args), remove /s/pki/.pki.lock',
      )
      assert.equal(
        new LockTimeoutError('/s/x.lock', undefined).removeAction,
        'if no fleetkit command is running, remove /s/x.lock',
      )
    })
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

  it('stops waiting when its signal aborts, with the signal reason, leaving the holder its lock', async () => {
    const path = join(dir, 'lock')
    await writeFile(path, `${process.pid} 0 other\n`)
    const controller = new AbortController()
    let ran = false
    const waiting = withFileLock(
      path,
      async () => {
        ran = true
      },
      // A timeout no test waits out: only the abort can end this wait.
      {
        timeoutMs: 600_000,
        pollMs: 60_000,
        signal: controller.signal,
        onWait: () => controller.abort(new Error('interrupted by SIGINT')),
      },
    )
    await assert.rejects(waiting, /interrupted by SIGINT/)
    assert.equal(ran, false)
    assert.equal(await readFile(path, 'utf8'), `${process.pid} 0 other\n`)
  })

  it('takes nothing when its signal has already aborted, even a free lock', async () => {
    const path = join(dir, 'lock')
    await assert.rejects(
      withFileLock(path, async () => true, { signal: AbortSignal.abort(new Error('stopped')) }),
      /stopped/,
    )
    assert.ok(!existsSync(path))
  })

  it('processIsAlive knows this process and rejects nonsense', () => {
    assert.ok(processIsAlive(process.pid))
    assert.ok(!processIsAlive(0))
    assert.ok(!processIsAlive(-5))
  })
})
