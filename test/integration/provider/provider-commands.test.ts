// `fleetkit provider stub` and `fleetkit provider check` as an operator runs them: the stub's
// startup line (schema/output/provider-stub), the check against it, the codes, and Ctrl-C.
import assert from 'node:assert/strict'

import { assertMatchesOutputSchema, fleetkitEntry, runFleetkit } from '../../support/cli.js'
import { eventually } from '../../support/eventually.js'
import {
  type DisposablePostgres,
  type FreshDatabase,
  freshDatabase,
  startDisposablePostgres,
} from '../../support/postgres.js'
import { overlayEnv, startProcess } from '../../support/process.js'

describe('fleetkit provider stub and provider check (the real CLI)', function () {
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

  it('the stub prints its URL and token as one JSON line; check answers with them; Ctrl-C ends it with 130', async () => {
    const stub = startProcess(process.execPath, [fleetkitEntry(), 'provider', 'stub', '--json'], {
      env: overlayEnv({}),
    })
    try {
      await eventually('the startup line', () => stub.stdout().includes('\n'), {
        timeoutMs: 60_000,
        stop: () => (stub.exit() ? `stub exited (${stub.exit()?.code}): ${stub.stderr()}` : undefined),
      })
      const startup = JSON.parse(stub.stdout().split('\n')[0]!) as { result: { url: string; token: string } }
      assertMatchesOutputSchema('provider-stub', startup)

      const check = await runFleetkit(['provider', 'check', '--api-url', startup.result.url, '--json'], {
        env: { HETZNER_API_TOKEN: startup.result.token, DATABASE_URL: db.url },
      })
      assert.equal(check.code, 0, check.stderr)
      assertMatchesOutputSchema('provider-check', check.json)
      assert.ok(check.json.result.locations.includes('fsn1'))
      // Two requests of the stub's 3,600 an hour, as the state now has it for every process.
      assert.deepEqual(check.json.result.budget, { limit: 3600, remaining: 3598 })
      assert.ok(!check.stdout.includes(startup.result.token), 'check never prints the token')

      const refused = await runFleetkit(['provider', 'check', '--api-url', startup.result.url], {
        env: { HETZNER_API_TOKEN: 'not-the-stubs-token-5f2a', DATABASE_URL: db.url },
      })
      assert.equal(refused.code, 1)
      assert.match(refused.stderr, /^Error \(PROVIDER_UNAUTHORIZED\): /m)
      assert.ok(!`${refused.stdout}${refused.stderr}`.includes('not-the-stubs-token-5f2a'))

      stub.child.kill('SIGINT')
      const ended = await stub.exited
      assert.equal(ended.code, 130, stub.stderr())
      const last = JSON.parse(stub.stdout().trim().split('\n').at(-1)!) as { code: string }
      assert.equal(last.code, 'COMMAND_INTERRUPTED')
    } finally {
      stub.child.kill('SIGKILL')
    }
  })

  it('check without a token is PROVIDER_TOKEN_MISSING naming the variable; one that does not answer is PROVIDER_UNAVAILABLE', async () => {
    // Refused before the state opens: no database is named, none is started.
    const missing = await runFleetkit(['provider', 'check', '--token-env', 'ACME_HCLOUD', '--json'], {
      env: { ACME_HCLOUD: undefined, DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none' },
    })
    assert.equal(missing.json.code, 'PROVIDER_TOKEN_MISSING')
    assert.match(missing.json.message, /ACME_HCLOUD/)
    // Port 9 on loopback (discard) refuses the connection: reads are retried, then the code says so.
    const down = await runFleetkit(['provider', 'check', '--api-url', 'http://127.0.0.1:9/v1', '--json'], {
      env: { HETZNER_API_TOKEN: 'whatever', DATABASE_URL: db.url },
    })
    assert.equal(down.json.code, 'PROVIDER_UNAVAILABLE')
    assert.equal(down.json.data.attempts, 4)
  })
})
