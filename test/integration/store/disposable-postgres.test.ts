import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'

import { processIsAlive } from '../../../src/fs/file-lock.js'
import { embeddedBinaries, systemBinaries } from '../../../src/store/postgres-binaries.js'
import { freshDatabase, runSql, startDisposablePostgres } from '../../support/postgres.js'

describe('test support: the disposable PostgreSQL', function () {
  this.timeout(120_000)

  const variants: ('embedded' | 'system')[] = []
  if (embeddedBinaries()) variants.push('embedded')
  if (systemBinaries()) variants.push('system')

  it('finds at least one set of PostgreSQL binaries', () => {
    assert.ok(variants.length > 0)
  })

  for (const prefer of variants) {
    it(`runs on the ${prefer} binaries, hands out isolated migrated databases, and leaves nothing behind`, async () => {
      const server = await startDisposablePostgres({ prefer })
      let stopped = false
      try {
        const fsync = await runSql(server.url, 'SHOW fsync')
        assert.equal(fsync.rows[0].fsync, 'off')
        const [a, b] = await Promise.all([freshDatabase(server.url), freshDatabase(server.url)])
        try {
          assert.notEqual(a.name, b.name)
          await a.pool.query("INSERT INTO nodes (id, pool) VALUES ('only-in-a', 'p')")
          const inB = await b.pool.query("SELECT count(*)::int AS n FROM nodes WHERE id = 'only-in-a'")
          assert.equal(inB.rows[0].n, 0)
          const migrated = await b.pool.query('SELECT count(*)::int AS n FROM schema_migrations')
          assert.ok(migrated.rows[0].n >= 1)
        } finally {
          await a.drop()
          await b.drop()
        }
        await server.stop()
        stopped = true
        assert.ok(!processIsAlive(server.pid))
        assert.ok(!existsSync(server.dataDir))
      } finally {
        if (!stopped) await server.stop()
      }
    })
  }
})
