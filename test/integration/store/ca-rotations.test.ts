// The rotation ledger (real PostgreSQL): the latest rotation is the one with the highest id, also past the
// ninth (the id is read as text: ordered as text, '9' came after '10', and the tenth rotation could be neither
// completed nor aborted).
import assert from 'node:assert/strict'

import { finishRotation, insertRotation, latestRotation } from '../../../src/store/pki/ca-rotations.js'
import { freshDatabasePerTest } from '../../support/postgres.js'

describe('CA rotations in the state (real PostgreSQL)', function () {
  this.timeout(30_000)
  const db = freshDatabasePerTest()

  it('the latest rotation is the newest, past ten of them', async () => {
    const now = new Date()
    for (let i = 1; i <= 11; i++) {
      const hex = (n: number) => n.toString(16).padStart(64, '0')
      const rotation = await insertRotation(db().pool, { oldCaSha256: hex(i), newCaSha256: hex(100 + i), now })
      const latest = await latestRotation(db().pool)
      assert.equal(latest?.id, rotation.id, `rotation ${i}`)
      assert.equal(latest?.status, 'begun')
      assert.ok(await finishRotation(db().pool, rotation.id, 'aborted', now))
    }
  })
})
