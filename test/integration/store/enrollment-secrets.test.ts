// A reissued enrollment secret (src/store/nodes/enrollment-secrets.ts): stored beside an enrolled node's
// status, consumable by that node once, and never a way around "provisioning" for other secrets.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'

import { withTransaction } from '../../../src/store/database.js'
import {
  clearSecretReissued,
  consumeEnrollmentSecret,
  issueEnrollmentSecret,
  lockNodeSecretState,
  onDatabaseClock,
  reissueEnrollmentSecret,
} from '../../../src/store/nodes/enrollment-secrets.js'
import { getNode, setNodeHostKey, setNodeStatus, upsertDeclaredNode } from '../../../src/store/nodes/nodes.js'
import {
  type DisposablePostgres,
  type FreshDatabase,
  freshDatabase,
  startDisposablePostgres,
} from '../../support/postgres.js'

const sha256 = (text: string) => createHash('sha256').update(text).digest()
const T0 = new Date('2026-03-01T12:00:00Z')
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000)

describe('node secrets: reissue (real PostgreSQL)', function () {
  this.timeout(120_000)
  let server: DisposablePostgres
  let db: FreshDatabase
  before(async () => {
    server = await startDisposablePostgres()
  })
  after(async () => {
    await server?.stop()
  })
  beforeEach(async () => {
    db = await freshDatabase(server.url)
    await upsertDeclaredNode(db.pool, { id: 'n1', pool: 'web' })
    await issueEnrollmentSecret(db.pool, 'n1', sha256('first'), at(900))
    assert.equal(await consumeEnrollmentSecret(db.pool, 'n1', sha256('first'), at(1)), true)
  })
  afterEach(async () => {
    await db?.drop()
  })

  it('keeps an enrolled node active with its new secret, which that node can then consume once', async () => {
    assert.equal(await reissueEnrollmentSecret(db.pool, 'n1', sha256('second'), at(1900)), true)
    const node = await getNode(db.pool, 'n1')
    assert.equal(node?.status, 'active')
    assert.equal(node?.enrollmentSecretUsedAt, null)
    assert.equal(await consumeEnrollmentSecret(db.pool, 'n1', sha256('first'), at(2)), false, 'the old secret is gone')
    assert.equal(await consumeEnrollmentSecret(db.pool, 'n1', sha256('second'), at(3)), true)
    assert.equal(await consumeEnrollmentSecret(db.pool, 'n1', sha256('second'), at(4)), false, 'once')
    assert.equal(await reissueEnrollmentSecret(db.pool, 'nobody', sha256('x'), at(10)), false)
  })

  it('a draining node stays draining when it re-enrolls; a lost one becomes active', async () => {
    for (const [status, after] of [
      ['draining', 'draining'],
      ['lost', 'active'],
    ] as const) {
      await setNodeStatus(db.pool, 'n1', status)
      await reissueEnrollmentSecret(db.pool, 'n1', sha256(status), at(1900))
      assert.equal(await consumeEnrollmentSecret(db.pool, 'n1', sha256(status), at(5)), true, status)
      assert.equal((await getNode(db.pool, 'n1'))?.status, after)
    }
  })

  it('a secret issued the ordinary way is no reissue: an enrolled node cannot consume it', async () => {
    await reissueEnrollmentSecret(db.pool, 'n1', sha256('second'), at(1900))
    await issueEnrollmentSecret(db.pool, 'n1', sha256('third'), at(1900))
    await clearSecretReissued(db.pool, 'n1')
    await setNodeStatus(db.pool, 'n1', 'active')
    assert.equal(await consumeEnrollmentSecret(db.pool, 'n1', sha256('third'), at(5)), false)
  })

  it("lockNodeSecretState reads status, pinned key and the pending secret's times under a row lock", async () => {
    await setNodeHostKey(
      db.pool,
      'n1',
      'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPdRl3VEfS8Ir661qc0rFEACHmzWcHU6RE3gIZhMM3sS n1',
    )
    const state = await withTransaction(db.pool, (client) => lockNodeSecretState(client, 'n1'))
    assert.deepEqual(
      { status: state?.status, hostKeyPublic: state?.hostKeyPublic },
      {
        status: 'active',
        hostKeyPublic: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPdRl3VEfS8Ir661qc0rFEACHmzWcHU6RE3gIZhMM3sS n1',
      },
    )
    // The second secret was issued and used above: the plan reads both times, never the hash.
    assert.ok(state?.secretExpiresAt instanceof Date && state.secretUsedAt instanceof Date, JSON.stringify(state))
    // ... and when it was stored, on the database's clock (a reissue started before it is refused).
    assert.ok(state?.secretIssuedAt instanceof Date, JSON.stringify(state))
    assert.deepEqual(Object.keys(state!).sort(), [
      'hostKeyPublic',
      'provisionState',
      'secretExpiresAt',
      'secretIssuedAt',
      'secretUsedAt',
      'status',
    ])
    assert.equal(await withTransaction(db.pool, (client) => lockNodeSecretState(client, 'nobody')), undefined)
  })

  it('onDatabaseClock moves a time on a skewed caller clock onto the database clock', async () => {
    const { rows } = await db.pool.query<{ now: Date }>('SELECT clock_timestamp() AS now')
    const skew = 3_600_000
    const localNow = new Date(Date.now() + skew)
    const started = new Date(localNow.getTime() - 5_000)
    const moved = await onDatabaseClock(db.pool, started, localNow)
    const expected = rows[0]!.now.getTime() - 5_000
    assert.ok(
      Math.abs(moved.getTime() - expected) < 1_000,
      `${moved.toISOString()} vs ${new Date(expected).toISOString()}`,
    )
  })
})
