// The certificate rows the gateway reads in bulk (src/store/pki/certificates.ts): the warm-up's pages of
// live certificates (not revoked, not expired, of a node that may connect) in fingerprint order, and
// the look-up of many fingerprints in one query.
import assert from 'node:assert/strict'

import { AUTHENTICATED_STATUSES } from '../../../src/gateway/auth/agent-auth.js'
import {
  findCertificatesByFingerprints,
  insertNodeCertificate,
  listLiveCertificates,
  revokeNodeCertificates,
} from '../../../src/store/pki/certificates.js'
import { rotationProgress } from '../../../src/store/pki/ca-rotations.js'
import { type NodeStatus, setNodeStatus, upsertDeclaredNode } from '../../../src/store/nodes/nodes.js'
import {
  type DisposablePostgres,
  type FreshDatabase,
  freshDatabase,
  startDisposablePostgres,
} from '../../support/postgres.js'

const NOW = new Date()
const DAY = 86_400_000
const fingerprint = (n: number) => n.toString(16).padStart(64, '0')

describe('certificates: bulk reads for the authentication cache (real PostgreSQL)', function () {
  this.timeout(120_000)
  let server: DisposablePostgres
  let db: FreshDatabase
  before(async () => {
    server = await startDisposablePostgres()
  })
  after(async () => {
    await server?.stop()
  })
  afterEach(async () => {
    await db?.drop()
  })

  /** A node in `status` with one certificate (fingerprint `n`) that expires in `days`. */
  async function nodeWithCertificate(n: number, status: NodeStatus, days = 1): Promise<void> {
    const nodeId = `node-${n}`
    await upsertDeclaredNode(db.pool, { id: nodeId, pool: 'web' })
    await setNodeStatus(db.pool, nodeId, status)
    await insertNodeCertificate(db.pool, {
      nodeId,
      fingerprintSha256: fingerprint(n),
      serial: `0${n}`,
      notBefore: new Date(NOW.getTime() + (days - 2) * DAY),
      notAfter: new Date(NOW.getTime() + days * DAY),
      issuerCaSha256: 'c'.repeat(64),
      now: NOW,
    })
  }

  it('lists live certificates of nodes that may connect, a page at a time in fingerprint order', async () => {
    db = await freshDatabase(server.url)
    await nodeWithCertificate(5, 'active')
    await nodeWithCertificate(2, 'lost')
    await nodeWithCertificate(9, 'draining')
    await nodeWithCertificate(3, 'retired') // may not connect
    await nodeWithCertificate(4, 'active', -1) // expired
    await nodeWithCertificate(7, 'active')
    await revokeNodeCertificates(db.pool, 'node-7', NOW) // revoked
    const statuses = [...AUTHENTICATED_STATUSES]
    const first = await listLiveCertificates(db.pool, statuses, '', 2)
    assert.deepEqual(
      first.map((c) => [c.nodeId, c.nodeStatus]),
      [
        ['node-2', 'lost'],
        ['node-5', 'active'],
      ],
    )
    const rest = await listLiveCertificates(db.pool, statuses, first.at(-1)!.fingerprintSha256, 2)
    assert.deepEqual(
      rest.map((c) => c.nodeId),
      ['node-9'],
    )
    assert.deepEqual(await listLiveCertificates(db.pool, statuses, fingerprint(9), 2), [])
  })

  it("finds many fingerprints in one query, with each node's status; unknown ones are absent", async () => {
    db = await freshDatabase(server.url)
    await nodeWithCertificate(1, 'active')
    await nodeWithCertificate(2, 'retired')
    const found = await findCertificatesByFingerprints(db.pool, [fingerprint(1), fingerprint(2), fingerprint(3)])
    assert.deepEqual([...found.entries()].map(([f, c]) => [f, c.nodeId, c.nodeStatus]).sort(), [
      [fingerprint(1), 'node-1', 'active'],
      [fingerprint(2), 'node-2', 'retired'],
    ])
    assert.equal((await findCertificatesByFingerprints(db.pool, [])).size, 0)
  })

  it('ca rotate --complete --dry-run: nodes that do not connect but hold a live old-CA certificate are the ones completion cuts off', async () => {
    db = await freshDatabase(server.url)
    // Every certificate above is from CA c…c; the rotation's new CA is n…n.
    await nodeWithCertificate(1, 'active') // connects, not renewed: blocks completion
    await nodeWithCertificate(2, 'parked') // does not connect: cut off
    await nodeWithCertificate(3, 'lost') // does not connect: cut off
    await nodeWithCertificate(4, 'retired', -1) // its certificate expired: nothing to cut off
    const progress = await rotationProgress(db.pool, 'n'.repeat(64), NOW)
    assert.deepEqual(
      progress.blocking.map((n) => n.nodeId),
      ['node-1'],
    )
    assert.deepEqual(
      progress.cutOff.map((n) => [n.nodeId, n.status]),
      [
        ['node-2', 'parked'],
        ['node-3', 'lost'],
      ],
    )
  })
})
