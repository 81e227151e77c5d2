// The gateway's database probe against a real PostgreSQL: probes while all is well share one kept
// connection (no backend forked per probe), a kept connection the server ended is replaced within the
// same probe, `fresh` connects anew, close() leaves no connection, and a server that is gone rejects.
import assert from 'node:assert/strict'

import pg from 'pg'

import { DatabaseProbe, PROBE_APPLICATION_NAME } from '../../../src/store/probe.js'
import { type DisposablePostgres, startDisposablePostgres } from '../../support/postgres.js'

describe('the database probe keeps its connection (real PostgreSQL)', function () {
  this.timeout(60_000)
  let postgres: DisposablePostgres
  let admin: pg.Client
  let pool: pg.Pool
  before(async () => {
    postgres = await startDisposablePostgres()
    admin = new pg.Client({ connectionString: postgres.url })
    await admin.connect()
    pool = new pg.Pool({ connectionString: postgres.url, max: 1 })
  })
  after(async () => {
    await pool?.end()
    await admin?.end()
    await postgres?.stop()
  })

  /** The probe's backends, as the server lists them. */
  async function probeBackends(): Promise<number[]> {
    const { rows } = await admin.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE application_name = $1 ORDER BY pid',
      [PROBE_APPLICATION_NAME],
    )
    return rows.map((r) => r.pid)
  }

  it('answers on one kept connection, replaces one the server ended, and connects anew when asked', async () => {
    const probe = new DatabaseProbe(pool, 5000)
    try {
      await probe.probe()
      const [first] = await probeBackends()
      assert.ok(first, 'the probe shows in pg_stat_activity under its name')
      for (let i = 0; i < 5; i++) await probe.probe()
      assert.deepEqual(await probeBackends(), [first], 'six probes, one backend')

      await admin.query('SELECT pg_terminate_backend($1)', [first])
      await probe.probe()
      const [second] = await probeBackends()
      assert.ok(second !== undefined && second !== first, 'the ended connection was replaced within the probe')

      await probe.probe({ fresh: true })
      const after = await probeBackends()
      assert.equal(after.length, 1, 'the old kept connection is ended when a fresh one replaces it')
      assert.notEqual(after[0], second)
    } finally {
      await probe.close()
    }
    assert.deepEqual(await probeBackends(), [], 'close() leaves no connection')
  })

  it('rejects when nothing answers at the address', async () => {
    const gone = new pg.Pool({ host: '127.0.0.1', port: 1, user: 'nobody', database: 'none' })
    const probe = new DatabaseProbe(gone, 2000)
    try {
      await assert.rejects(probe.probe(), /ECONNREFUSED/)
      await assert.rejects(probe.probe({ fresh: true }), /ECONNREFUSED/)
    } finally {
      await probe.close()
      await gone.end()
    }
  })
})
