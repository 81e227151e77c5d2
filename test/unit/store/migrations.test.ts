import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { loadMigrations, migrationsDir } from '../../../src/store/migrate.js'

describe('migration files', () => {
  it('are numbered from 1 without gaps or duplicates, and 0001 creates the core tables', async () => {
    const migrations = await loadMigrations(migrationsDir())
    assert.ok(migrations.length >= 1)
    migrations.forEach((m, i) => assert.equal(m.version, i + 1, `migration ${m.name} should be number ${i + 1}`))
    const first = migrations[0]?.sql ?? ''
    for (const table of ['nodes', 'events', 'allocations']) assert.match(first, new RegExp(`CREATE TABLE ${table} \\(`))
  })

  it('refuse a file that is not NNNN-name.sql, and two files with one number', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleetkit-migrations-'))
    try {
      await writeFile(join(dir, '1-bad.sql'), 'SELECT 1')
      await assert.rejects(loadMigrations(dir), /NNNN-name\.sql/)
      await rm(join(dir, '1-bad.sql'))
      await writeFile(join(dir, '0001-a.sql'), 'SELECT 1')
      await writeFile(join(dir, '0001-b.sql'), 'SELECT 2')
      await assert.rejects(loadMigrations(dir), /two migrations have number 0001/)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
