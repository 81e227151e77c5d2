// `fleetkit events --follow --json` as a script reads it: one JSON object per line from the first
// event to the end, whether Ctrl-C ends it (exit 130) or a failure does.
import assert from 'node:assert/strict'

import { appendEvent } from '../../../src/store/events.js'
import { assertMatchesOutputSchema, fleetkitEntry, runFleetkit } from '../../support/cli.js'
import { eventually } from '../../support/eventually.js'
import { freePort } from '../../support/ports.js'
import {
  freshDatabase,
  startDisposablePostgres,
  type DisposablePostgres,
  type FreshDatabase,
} from '../../support/postgres.js'
import { overlayEnv, startProcess } from '../../support/process.js'

/** Every line of `stdout` parsed on its own: a pretty-printed document would fail here. */
function jsonLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>
      } catch {
        throw new Error(`not one JSON object per line: ${JSON.stringify(line)} in\n${stdout}`)
      }
    })
}

describe('fleetkit events --follow --json: one JSON object per line to its end', function () {
  this.timeout(120_000)
  let server: DisposablePostgres
  let db: FreshDatabase

  before(async () => {
    server = await startDisposablePostgres()
    db = await freshDatabase(server.url)
  })
  after(async () => {
    await db?.drop()
    await server?.stop()
  })

  it('prints the logged events, then each new one, and ends with a one-line COMMAND_INTERRUPTED on Ctrl-C (exit 130)', async () => {
    await appendEvent(db.pool, { kind: 'node_parked', nodeId: 'f-1' })
    const follow = startProcess(process.execPath, [fleetkitEntry(), 'events', '--follow', '--json'], {
      env: overlayEnv({ DATABASE_URL: db.url }),
    })
    try {
      await eventually('the logged event', () => follow.stdout().includes('node_parked'), {
        timeoutMs: 60_000,
        stop: () => (follow.exit() ? `events exited (${follow.exit()?.code}): ${follow.stderr()}` : undefined),
      })
      await appendEvent(db.pool, { kind: 'node_unparked', nodeId: 'f-1', data: { actor: 'ci' } })
      await eventually('the new event', () => follow.stdout().includes('node_unparked'), { timeoutMs: 30_000 })
      follow.child.kill('SIGINT')
      const ended = await follow.exited
      assert.equal(ended.code, 130, follow.stderr())
    } finally {
      await follow.stop('SIGKILL', 1000)
    }
    const lines = jsonLines(follow.stdout())
    assert.deepEqual(
      lines.slice(0, -1).map((e) => [e.kind, e.nodeId]),
      [
        ['node_parked', 'f-1'],
        ['node_unparked', 'f-1'],
      ],
    )
    const last = lines.at(-1)!
    assert.equal(last.code, 'COMMAND_INTERRUPTED')
    assert.equal(last.exitCode, 130)
    assertMatchesOutputSchema('events', last)
  })

  it('lists the logged events in time order and follows after the newest id: none is printed twice', async () => {
    // Logged last with the earliest time (its writer's clock): listed first, yet the greatest id so far.
    const parked = await appendEvent(db.pool, { kind: 'node_parked', nodeId: 'f-2' })
    await appendEvent(db.pool, { kind: 'node_held', nodeId: 'f-2', at: new Date(parked.at.getTime() - 1000) })
    const follow = startProcess(process.execPath, [fleetkitEntry(), 'events', '--node', 'f-2', '--follow', '--json'], {
      env: overlayEnv({ DATABASE_URL: db.url }),
    })
    try {
      await eventually('the logged events', () => follow.stdout().includes('node_parked'), {
        timeoutMs: 60_000,
        stop: () => (follow.exit() ? `events exited (${follow.exit()?.code}): ${follow.stderr()}` : undefined),
      })
      await appendEvent(db.pool, { kind: 'node_unparked', nodeId: 'f-2' })
      await eventually('the new event', () => follow.stdout().includes('node_unparked'), { timeoutMs: 30_000 })
      follow.child.kill('SIGINT')
      assert.equal((await follow.exited).code, 130, follow.stderr())
    } finally {
      await follow.stop('SIGKILL', 1000)
    }
    assert.deepEqual(
      jsonLines(follow.stdout())
        .slice(0, -1)
        .map((e) => e.kind),
      ['node_held', 'node_parked', 'node_unparked'],
    )
  })

  it('past --limit lists the newest events, oldest first, and says older ones were left out', async () => {
    const own = await freshDatabase(server.url)
    try {
      for (const n of [1, 2, 3, 4, 5]) await appendEvent(own.pool, { kind: 'node_parked', nodeId: `l-${n}` })
      const env = { DATABASE_URL: own.url }
      const limited = await runFleetkit(['events', '--limit', '2', '--json'], { env })
      assertMatchesOutputSchema('events', limited.json)
      const { events, olderLeftOut } = limited.json.result as { events: { nodeId: string }[]; olderLeftOut: boolean }
      // Before, the first two ever logged: on a long-lived fleet plain `fleetkit events` never showed a recent one.
      assert.deepEqual(
        events.map((e) => e.nodeId),
        ['l-4', 'l-5'],
      )
      assert.equal(olderLeftOut, true)
      const whole = await runFleetkit(['events', '--limit', '5', '--json'], { env })
      assert.equal(whole.json.result.olderLeftOut, false)
      const human = await runFleetkit(['events', '--limit', '2'], { env })
      assert.deepEqual(
        human.stdout
          .trim()
          .split('\n')
          .map((line) => line.split(/\s+/)[2]),
        ['l-4', 'l-5'],
      )
      assert.match(human.stderr, /older events left out/)
    } finally {
      await own.drop()
    }
  })

  it('a failure under --follow --json is one JSON line too (a database that does not answer, a bad flag value)', async () => {
    const down = await runFleetkit(['events', '--follow', '--json'], {
      env: { DATABASE_URL: `postgres://fleetkit@127.0.0.1:${await freePort()}/fleetkit` },
    })
    assert.notEqual(down.code, 0)
    const [envelope, ...rest] = jsonLines(down.stdout)
    assert.deepEqual(rest, [])
    assert.equal(envelope!.code, 'STATE_UNREACHABLE', down.stdout)
    assertMatchesOutputSchema('events', envelope)
    const usage = await runFleetkit(['events', '--follow', '--since', 'yesterday', '--json'], {
      env: { DATABASE_URL: db.url },
    })
    assert.equal(usage.code, 2)
    assert.equal(jsonLines(usage.stdout).length, 1)
    assert.equal(jsonLines(usage.stdout)[0]!.code, 'USAGE_INVALID')
  })
})
