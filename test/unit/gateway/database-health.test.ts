// The database health check's one decision (issue 20, item 2): a probe that times out while the
// embedded postmaster lives is a slow database (shed, logged database_slow, never restarted); a
// postmaster that is gone is restarted (database_restarting). Liveness and the probe are injected.
import assert from 'node:assert/strict'

import { DatabaseHealth, type EmbeddedDatabase } from '../../../src/gateway/load/database-health.js'

const TIMEOUT = new Error('Connection terminated due to connection timeout')

function healthWith(options: {
  probe: (how: { fresh: boolean }) => Promise<void>
  embedded?: Partial<EmbeddedDatabase>
  now?: () => number
}) {
  const logs: { level: string; msg: string; fields: Record<string, unknown> }[] = []
  let restarts = 0
  const embedded: EmbeddedDatabase | undefined = options.embedded
    ? {
        livePostmaster: options.embedded.livePostmaster ?? (() => Promise.resolve(4242)),
        restart:
          options.embedded.restart ??
          (() => {
            restarts++
            return Promise.resolve()
          }),
      }
    : undefined
  const health = new DatabaseHealth({
    probe: options.probe,
    ...(embedded ? { embedded } : {}),
    intervalMs: 2000,
    logger: (level, msg, fields) => logs.push({ level, msg, fields: fields ?? {} }),
    ...(options.now ? { now: options.now } : {}),
  })
  return { health, logs, restarts: () => restarts, msgs: () => logs.map((l) => l.msg) }
}

describe('gateway: database health (slow is not dead)', () => {
  it('does not restart a live postmaster whose database times out: it sheds and logs database_slow', async () => {
    const t = healthWith({ probe: () => Promise.reject(TIMEOUT), embedded: {} })
    t.health.reportFailure(TIMEOUT)
    assert.equal(t.health.available, false, 'requests are shed (503) while it does not answer')
    await t.health.check()
    await t.health.check()
    assert.equal(t.restarts(), 0, 'a running postmaster is never restarted on a timeout')
    assert.deepEqual(t.msgs(), ['database_slow'], 'the decision is logged once')
    const slow = t.logs[0]!
    assert.equal(slow.level, 'warn')
    assert.equal(slow.fields.postmaster_pid, 4242)
    assert.match(String(slow.fields.error), /connection timeout/)
  })

  it('two timed-out probes in a row with a live postmaster: database_slow, no restart', async () => {
    const t = healthWith({ probe: () => Promise.reject(TIMEOUT), embedded: {} })
    await t.health.check()
    assert.equal(t.health.available, true, 'one slow probe is not an outage')
    await t.health.check()
    assert.equal(t.health.available, false)
    assert.equal(t.restarts(), 0)
    assert.deepEqual(t.msgs(), ['database_slow'])
  })

  it('restarts a postmaster that is gone (its PID is not a live postgres process)', async () => {
    let dead = true
    const t = healthWith({
      probe: () => (dead ? Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')) : Promise.resolve()),
      embedded: {
        livePostmaster: () => Promise.resolve(undefined),
        restart: () => {
          dead = false
          return Promise.resolve()
        },
      },
    })
    t.health.reportFailure(new Error('connect ECONNREFUSED 127.0.0.1:5432'))
    await t.health.check()
    assert.equal(t.health.available, true, 'serving again after the restart')
    assert.deepEqual(t.msgs(), ['database_unavailable', 'database_restarting', 'database_available'])
    assert.equal(t.logs[1]!.fields.reason, 'postmaster_gone')
    assert.equal(t.logs[2]!.fields.restarted, true)
  })

  it('a slow spell that ends needs nothing: the next probe that answers brings it back', async () => {
    let slow = true
    const t = healthWith({ probe: () => (slow ? Promise.reject(TIMEOUT) : Promise.resolve()), embedded: {} })
    t.health.reportFailure(TIMEOUT)
    await t.health.check()
    slow = false
    await t.health.check()
    assert.equal(t.health.available, true)
    assert.equal(t.restarts(), 0)
    assert.deepEqual(t.msgs(), ['database_slow', 'database_available'])
  })

  it('an unreadable postmaster.pid is no proof of death: no restart', async () => {
    const t = healthWith({
      probe: () => Promise.reject(TIMEOUT),
      embedded: { livePostmaster: () => Promise.reject(new Error('EACCES')) },
    })
    t.health.reportFailure(TIMEOUT)
    await t.health.check()
    assert.equal(t.restarts(), 0)
    assert.deepEqual(t.msgs(), ['database_slow'])
  })

  it('DATABASE_URL (someone else runs it): database_unavailable, nothing to restart', async () => {
    const t = healthWith({ probe: () => Promise.reject(TIMEOUT) })
    t.health.reportFailure(TIMEOUT)
    await t.health.check()
    assert.deepEqual(t.msgs(), ['database_unavailable'])
  })
  it('probes on the kept connection while all is well, on a new one once anything is amiss', async () => {
    const asked: boolean[] = []
    let failing = false
    const t = healthWith({
      probe: ({ fresh }) => {
        asked.push(fresh)
        return failing ? Promise.reject(TIMEOUT) : Promise.resolve()
      },
      embedded: {},
    })
    await t.health.check()
    assert.deepEqual(asked, [false], "the timer's probe while up: the kept connection")
    // A request's connection failed: a kept connection that still answers must not declare it well.
    t.health.reportFailure(TIMEOUT)
    await t.health.check()
    assert.deepEqual(asked, [false, true], 'after a reported failure: a new connection')
    assert.equal(t.health.available, true, 'a new connection answered: back')
    failing = true
    await t.health.check()
    await t.health.check()
    assert.deepEqual(asked.slice(2), [false, true], 'one failed probe: the next connects anew before it counts')
    assert.equal(t.health.available, false)
    failing = false
    await t.health.check()
    assert.equal(asked.at(-1), true, 'while down: a new connection decides')
    assert.equal(t.health.available, true)
  })

  it('a restart that fails (a full disk) is tried again after waits doubling from 2 s to 30 s, not at every probe; back, the wait resets', async () => {
    let now = 1_000_000
    let full = true
    let restarts = 0
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:5432')
    const cannotStart = Object.assign(
      new Error(
        'the embedded PostgreSQL could not start: the disk of /srv/state/postgres is full (FATAL: could not write lock file "postmaster.pid": No space left on device)',
      ),
      { code: 'STATE_DISK_FULL' },
    )
    const t = healthWith({
      probe: () => (full || restarts === 0 ? Promise.reject(refused) : Promise.resolve()),
      embedded: {
        livePostmaster: () => Promise.resolve(undefined),
        restart: () => {
          restarts++
          return full ? Promise.reject(cannotStart) : Promise.resolve()
        },
      },
      now: () => now,
    })
    const failed = () => t.logs.filter((l) => l.msg === 'database_restart_failed')
    t.health.reportFailure(refused)
    await t.health.check()
    assert.equal(restarts, 1, 'the first restart is at once')
    assert.equal(failed()[0]!.fields.code, 'STATE_DISK_FULL')
    assert.match(String(failed()[0]!.fields.error), /No space left on device/, 'the reason, not the last log lines')
    for (const wait of [2000, 4000, 8000, 16_000, 30_000, 30_000]) {
      assert.equal(failed().at(-1)!.fields.retry_in_ms, wait)
      const restartsBefore: number = restarts
      const failedAt = now
      // Failing queries report and probe far more often than that: none of them restarts before the wait is over.
      for (let step = 1; step <= 10; step++) {
        now = failedAt + Math.floor(((wait - 1) * step) / 10)
        t.health.reportFailure(refused)
        await t.health.check()
      }
      assert.equal(restarts, restartsBefore, `no restart within ${wait} ms`)
      now = failedAt + wait
      await t.health.check()
      assert.equal(restarts, restartsBefore + 1, `a restart once ${wait} ms have passed`)
    }
    assert.equal(
      t.msgs().filter((msg) => msg === 'database_restarting').length,
      7,
      'one line per restart, not per probe',
    )
    assert.equal(t.msgs().filter((msg) => msg === 'database_unavailable').length, 1)

    // Space freed: the next restart works and the wait starts from 2 s again at the next outage.
    full = false
    now += 30_000
    await t.health.check()
    assert.equal(t.health.available, true)
    assert.equal(t.msgs().at(-1), 'database_available')
    full = true
    t.health.reportFailure(refused)
    await t.health.check()
    assert.equal(failed().at(-1)!.fields.retry_in_ms, 2000)
  })
})
