// `db backup` raced: the PKI lock is held from before the database snapshot until the PKI is read,
// so no `ca rotate` lands between the two parts.
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { open } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { toFleetkitError } from '../../../src/checks/fleetkit-error.js'
import { backupState } from '../../../src/lifecycle/state/db-backup.js'
import { initPki } from '../../../src/pki/init-pki.js'
import { withPkiLock } from '../../../src/pki/pki-lock.js'
import { freshDatabasePerTest } from '../../support/postgres.js'

describe('db backup: a rotation racing it', function () {
  this.timeout(120_000)
  const db = freshDatabasePerTest()
  const now = new Date('2026-12-01T00:00:00Z')
  let dir: string
  let pkiDir: string
  let out: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-backup-interrupted-'))
    pkiDir = join(dir, 'pki')
    await initPki({ pkiDir, now: new Date() })
    out = join(dir, 'backups')
    await mkdir(out)
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('holds the PKI lock from the snapshot until the PKI is read: a rotation cannot slip in between', async () => {
    let probed: string | undefined
    const result = await backupState({
      pool: db().pool,
      pkiDir,
      out: join(out, 'b.tar.gz'),
      now,
      open: async (path, flags, mode) => {
        // The first row file: the snapshot is being read. A `ca rotate` would take the PKI lock now.
        probed ??= await withPkiLock(pkiDir, async () => 'taken', { timeoutMs: 200 }).then(
          (taken) => taken,
          (error: unknown) => toFleetkitError(error).code,
        )
        return open(path, flags, mode)
      },
    })
    assert.equal(probed, 'PKI_BUSY', 'the PKI lock was free while the database snapshot was read')
    assert.deepEqual(result.pkiFiles, ['ca-bundle.pem', 'ca.key', 'ca.pem', 'server.key', 'server.pem'])
  })
})
