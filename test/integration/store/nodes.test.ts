import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'

import { withTransaction } from '../../../src/store/database.js'
import { appendEvent, listEvents } from '../../../src/store/events.js'
import { HOST_FACT_STRING_MAX } from '../../../src/protocol/host-facts.js'
import { consumeEnrollmentSecret, issueEnrollmentSecret } from '../../../src/store/nodes/enrollment-secrets.js'
import { recordHeartbeats } from '../../../src/store/nodes/heartbeats.js'
import {
  countNodesByStatus,
  getNode,
  listNodes,
  setNodeHostKey,
  setNodeStatus,
  upsertDeclaredNode,
} from '../../../src/store/nodes/nodes.js'
import { freshDatabasePerTest } from '../../support/postgres.js'

const sha256 = (text: string) => createHash('sha256').update(text).digest()
const T0 = new Date('2026-03-01T12:00:00Z')
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000)

describe('nodes and events (real PostgreSQL)', function () {
  this.timeout(120_000)
  const database = freshDatabasePerTest()

  describe('upsertDeclaredNode', () => {
    it('creates a parked node, then updates pool, region and type but keeps status unless given', async () => {
      const created = await upsertDeclaredNode(database().pool, { id: 'web-1', pool: 'web', region: 'fsn1' })
      assert.equal(created.status, 'parked')
      assert.equal(created.schedulable, false)
      assert.equal(created.region, 'fsn1')
      await setNodeStatus(database().pool, 'web-1', 'active')
      const updated = await upsertDeclaredNode(database().pool, { id: 'web-1', pool: 'web2', serverType: 'cx22' })
      assert.equal(updated.pool, 'web2')
      assert.equal(updated.region, 'fsn1')
      assert.equal(updated.serverType, 'cx22')
      assert.equal(updated.status, 'active')
      const retired = await upsertDeclaredNode(database().pool, { id: 'web-1', pool: 'web2', status: 'retired' })
      assert.equal(retired.status, 'retired')
    })

    it('rejects a status the schema does not know (check constraint, SQLSTATE 23514)', async () => {
      await assert.rejects(
        upsertDeclaredNode(database().pool, { id: 'x', pool: 'p', status: 'bogus' as 'active' }),
        (e: { code?: string }) => e.code === '23514',
      )
    })
  })

  describe('enrollment secrets', () => {
    const secret = sha256('the secret')

    it('stores only the hash, sets provisioning, and consumes once: the node becomes active with last_seen_at', async () => {
      await upsertDeclaredNode(database().pool, { id: 'n1', pool: 'web' })
      const issued = await issueEnrollmentSecret(database().pool, 'n1', secret, at(900))
      assert.equal(issued?.status, 'provisioning')
      assert.equal(issued?.hasEnrollmentSecret, true)
      assert.ok(!('enrollmentSecretSha256' in (issued ?? {})), 'the hash is never read back')
      assert.equal(await consumeEnrollmentSecret(database().pool, 'n1', secret, at(10)), true)
      const node = await getNode(database().pool, 'n1')
      assert.equal(node?.status, 'active')
      // last_seen_at is the database's now(), not the caller's clock: the sweep judges silence on it (issue 11).
      const { rows } = await database().pool.query<{ now: Date }>('SELECT now() AS now')
      assert.ok(Math.abs(node!.lastSeenAt!.getTime() - rows[0]!.now.getTime()) < 5000)
      assert.equal(node?.enrollmentSecretUsedAt?.toISOString(), at(10).toISOString())
      assert.equal(
        await consumeEnrollmentSecret(database().pool, 'n1', secret, at(11)),
        false,
        'used secrets are refused',
      )
    })

    it('refuses a wrong hash, an expired secret, an unknown node and a node not provisioning', async () => {
      await upsertDeclaredNode(database().pool, { id: 'n1', pool: 'web' })
      await issueEnrollmentSecret(database().pool, 'n1', secret, at(900))
      assert.equal(await consumeEnrollmentSecret(database().pool, 'n1', sha256('wrong'), at(1)), false)
      assert.equal(
        await consumeEnrollmentSecret(database().pool, 'n1', secret, at(900)),
        false,
        'expired at exactly expires_at',
      )
      assert.equal(await consumeEnrollmentSecret(database().pool, 'nobody', secret, at(1)), false)
      assert.equal(await consumeEnrollmentSecret(database().pool, 'n1', Buffer.alloc(3), at(1)), false)
      await setNodeStatus(database().pool, 'n1', 'draining')
      assert.equal(await consumeEnrollmentSecret(database().pool, 'n1', secret, at(1)), false)
      assert.equal((await getNode(database().pool, 'n1'))?.enrollmentSecretUsedAt, null)
    })

    it('a new secret replaces the old one and clears its used mark; provision_state becomes enrolled', async () => {
      await upsertDeclaredNode(database().pool, { id: 'n1', pool: 'web' })
      await database().pool.query("UPDATE nodes SET provision_state = 'awaiting_enrollment' WHERE id = 'n1'")
      await issueEnrollmentSecret(database().pool, 'n1', secret, at(900))
      assert.equal(await consumeEnrollmentSecret(database().pool, 'n1', secret, at(1)), true)
      const second = sha256('second')
      await issueEnrollmentSecret(database().pool, 'n1', second, at(1900))
      assert.equal(await consumeEnrollmentSecret(database().pool, 'n1', secret, at(2)), false, 'the old secret is gone')
      assert.equal(await consumeEnrollmentSecret(database().pool, 'n1', second, at(3)), true)
      assert.equal((await getNode(database().pool, 'n1'))?.provisionState, 'enrolled')
    })

    it('50 concurrent consumers of one secret: exactly one wins', async () => {
      await upsertDeclaredNode(database().pool, { id: 'n1', pool: 'web' })
      await issueEnrollmentSecret(database().pool, 'n1', secret, at(900))
      const results = await Promise.all(
        Array.from({ length: 50 }, () => consumeEnrollmentSecret(database().pool, 'n1', secret, at(5))),
      )
      assert.equal(results.filter(Boolean).length, 1)
    })

    it('issuing for an unknown node returns undefined; a hash that is not 32 bytes is refused', async () => {
      assert.equal(await issueEnrollmentSecret(database().pool, 'ghost', secret, at(900)), undefined)
      await assert.rejects(issueEnrollmentSecret(database().pool, 'ghost', Buffer.from('short'), at(900)), RangeError)
    })
  })

  describe('heartbeats', () => {
    it('writes a batch in one statement: last_seen_at, bounded facts and host_facts_at; unknown nodes ignored', async () => {
      await upsertDeclaredNode(database().pool, { id: 'a', pool: 'p', status: 'active' })
      await upsertDeclaredNode(database().pool, { id: 'b', pool: 'p', status: 'active' })
      let statements = 0
      const pool = database().pool
      const counting = {
        query: ((...args: Parameters<typeof pool.query>) => {
          statements++
          return pool.query(...args)
        }) as typeof pool.query,
      }
      const updated = await recordHeartbeats(counting, [
        {
          nodeId: 'a',
          seenAt: at(1),
          facts: {
            cpu_count: 4,
            memory_mb: 8000,
            data_disk_free_gb: 50.5,
            kernel: 'k'.repeat(5000),
            docker_version: '27.1',
            agent_version: '0.1.0',
            bridge_netfilter: true,
            clock_skew_ms: 12,
          },
        },
        { nodeId: 'b', seenAt: at(2) },
        { nodeId: 'ghost', seenAt: at(3), facts: { cpu_count: 1 } },
      ])
      assert.equal(updated, 2)
      assert.equal(statements, 1, 'one statement for the whole batch')
      const a = await getNode(database().pool, 'a')
      assert.equal(a?.lastSeenAt?.toISOString(), at(1).toISOString())
      assert.equal(a?.hostCpuCount, 4)
      assert.equal(a?.hostMemoryMb, 8000)
      assert.equal(a?.hostDataDiskFreeGb, 50.5)
      assert.equal(a?.hostKernel?.length, HOST_FACT_STRING_MAX)
      assert.equal(a?.hostBridgeNetfilter, true)
      assert.equal(a?.hostClockSkewMs, 12)
      assert.equal(a?.hostFactsAt?.toISOString(), at(1).toISOString())
      const b = await getNode(database().pool, 'b')
      assert.equal(b?.lastSeenAt?.toISOString(), at(2).toISOString())
      assert.equal(b?.hostFactsAt, null)
    })

    it('never moves last_seen_at or facts backwards, and keeps facts when a beat carries none', async () => {
      await upsertDeclaredNode(database().pool, { id: 'a', pool: 'p', status: 'active' })
      await recordHeartbeats(database().pool, [
        { nodeId: 'a', seenAt: at(10), facts: { cpu_count: 8, agent_version: 'new' } },
      ])
      await recordHeartbeats(database().pool, [
        { nodeId: 'a', seenAt: at(5), facts: { cpu_count: 2, agent_version: 'old' } },
      ])
      let a = await getNode(database().pool, 'a')
      assert.equal(a?.lastSeenAt?.toISOString(), at(10).toISOString())
      assert.equal(a?.hostAgentVersion, 'new')
      await recordHeartbeats(database().pool, [{ nodeId: 'a', seenAt: at(20) }])
      a = await getNode(database().pool, 'a')
      assert.equal(a?.lastSeenAt?.toISOString(), at(20).toISOString())
      assert.equal(a?.hostCpuCount, 8)
      assert.equal(a?.hostFactsAt?.toISOString(), at(10).toISOString())
    })

    it('for one node twice in a batch the latest beat wins, and an empty batch writes nothing', async () => {
      await upsertDeclaredNode(database().pool, { id: 'a', pool: 'p', status: 'active' })
      assert.equal(await recordHeartbeats(database().pool, []), 0)
      await recordHeartbeats(database().pool, [
        { nodeId: 'a', seenAt: at(30), facts: { cpu_count: 3 } },
        { nodeId: 'a', seenAt: at(20), facts: { cpu_count: 2 } },
      ])
      const a = await getNode(database().pool, 'a')
      assert.equal(a?.hostCpuCount, 3)
      assert.equal(a?.lastSeenAt?.toISOString(), at(30).toISOString())
    })

    it('overlapping batches from several writers at once neither deadlock nor lose the newest beat', async () => {
      const ids = Array.from({ length: 40 }, (_, i) => `n${String(i).padStart(2, '0')}`)
      for (const id of ids) await upsertDeclaredNode(database().pool, { id, pool: 'p', status: 'active' })
      const writers = Array.from({ length: 6 }, (_, w) => {
        const order = w % 2 === 0 ? ids : [...ids].reverse()
        return recordHeartbeats(
          database().pool,
          order.map((nodeId) => ({ nodeId, seenAt: at(100 + w), facts: { cpu_count: w + 1 } })),
        )
      })
      await Promise.all(writers)
      const nodes = await listNodes(database().pool)
      for (const node of nodes) {
        assert.equal(node.lastSeenAt?.toISOString(), at(105).toISOString())
        assert.equal(node.hostCpuCount, 6)
      }
    })

    it('stores strings with quotes, backslashes, braces and unicode intact (array parameters)', async () => {
      await upsertDeclaredNode(database().pool, { id: 'a', pool: 'p', status: 'active' })
      const kernel = 'x"y\\z{1,2} NULL ü'
      await recordHeartbeats(database().pool, [{ nodeId: 'a', seenAt: at(1), facts: { kernel } }])
      assert.equal((await getNode(database().pool, 'a'))?.hostKernel, kernel)
    })
  })

  describe('status, listing and host keys', () => {
    it('setNodeStatus clears schedulable when a node leaves active/unhealthy', async () => {
      await upsertDeclaredNode(database().pool, { id: 'a', pool: 'p', status: 'active' })
      await database().pool.query("UPDATE nodes SET schedulable = true WHERE id = 'a'")
      assert.equal((await setNodeStatus(database().pool, 'a', 'unhealthy'))?.schedulable, true)
      assert.equal((await setNodeStatus(database().pool, 'a', 'draining'))?.schedulable, false)
      assert.equal(await setNodeStatus(database().pool, 'ghost', 'active'), undefined)
      await assert.rejects(setNodeStatus(database().pool, 'a', 'bogus' as 'active'), RangeError)
    })

    it('lists by status and pool, ordered, and counts every status', async () => {
      await upsertDeclaredNode(database().pool, { id: 'b', pool: 'web', status: 'active' })
      await upsertDeclaredNode(database().pool, { id: 'a', pool: 'web', status: 'active' })
      await upsertDeclaredNode(database().pool, { id: 'c', pool: 'db' })
      assert.deepEqual(
        (await listNodes(database().pool)).map((n) => n.id),
        ['c', 'a', 'b'],
      )
      assert.deepEqual(
        (await listNodes(database().pool, { status: 'active' })).map((n) => n.id),
        ['a', 'b'],
      )
      assert.deepEqual(
        (await listNodes(database().pool, { status: ['parked', 'lost'], pool: 'db' })).map((n) => n.id),
        ['c'],
      )
      const counts = await countNodesByStatus(database().pool)
      assert.equal(counts.active, 2)
      assert.equal(counts.parked, 1)
      assert.equal(counts.lost, 0)
    })

    it('stores the public SSH host key', async () => {
      await upsertDeclaredNode(database().pool, { id: 'a', pool: 'p' })
      assert.equal(await setNodeHostKey(database().pool, 'a', 'ssh-ed25519 AAAAC3Nza test\n'), true)
      assert.equal((await getNode(database().pool, 'a'))?.hostKeyPublic, 'ssh-ed25519 AAAAC3Nza test')
      assert.equal(await setNodeHostKey(database().pool, 'ghost', 'ssh-ed25519 AAAA'), false)
      await assert.rejects(setNodeHostKey(database().pool, 'a', ''), RangeError)
    })
  })

  describe('events', () => {
    it('appends and lists by node, kind, time and id, oldest first', async () => {
      const e1 = await appendEvent(database().pool, {
        kind: 'node_enrolled',
        nodeId: 'a',
        data: { serial: 'ab' },
        at: at(1),
      })
      await appendEvent(database().pool, { kind: 'ca_rotation_begun', data: {}, at: at(2) })
      await appendEvent(database().pool, { kind: 'node_lost', nodeId: 'a', data: { silentSeconds: 301 }, at: at(3) })
      assert.equal(typeof e1.id, 'number')
      assert.deepEqual(e1.data, { serial: 'ab' })
      assert.deepEqual(
        (await listEvents(database().pool, { nodeId: 'a' })).map((e) => e.kind),
        ['node_enrolled', 'node_lost'],
      )
      assert.deepEqual(
        (await listEvents(database().pool, { kind: 'ca_rotation_begun' })).map((e) => e.nodeId),
        [null],
      )
      assert.deepEqual(
        (await listEvents(database().pool, { since: at(2) })).map((e) => e.kind),
        ['ca_rotation_begun', 'node_lost'],
      )
      assert.deepEqual(
        (await listEvents(database().pool, { afterId: e1.id, limit: 1 })).map((e) => e.kind),
        ['ca_rotation_begun'],
      )
    })

    it('lists the events of two interleaved transactions in the order they happened: at is when each was inserted', async () => {
      const pool = database().pool
      const first = await pool.connect()
      const second = await pool.connect()
      try {
        // The first transaction begins, then the second begins, logs and commits; the first logs last.
        await first.query('BEGIN')
        await first.query('SELECT pg_sleep(0.01)')
        await second.query('BEGIN')
        await appendEvent(second, { kind: 'logged_first' })
        await second.query('COMMIT')
        await appendEvent(first, { kind: 'logged_second' })
        // The column's own default, as the sweep's INSERTs use it.
        await first.query("INSERT INTO events (kind) VALUES ('logged_third')")
        await first.query('COMMIT')
      } finally {
        first.release()
        second.release()
      }
      const listed = await listEvents(pool)
      assert.deepEqual(
        listed.map((e) => e.kind),
        ['logged_first', 'logged_second', 'logged_third'],
      )
      for (let i = 1; i < listed.length; i++)
        assert.ok(
          listed[i - 1]!.at.getTime() <= listed[i]!.at.getTime(),
          `${listed[i - 1]!.kind} at ${listed[i - 1]!.at.toISOString()} is listed before ${listed[i]!.kind} at ${listed[i]!.at.toISOString()}`,
        )
      assert.ok(listed[0]!.at.getTime() < listed[1]!.at.getTime(), 'the later insert has the later time')
    })

    it('lists an event given its own time at that time, oldest first, whatever order the inserts came in', async () => {
      const pool = database().pool
      await appendEvent(pool, { kind: 'happened_second', at: at(2) })
      await appendEvent(pool, { kind: 'happened_first', at: at(1) })
      await appendEvent(pool, { kind: 'happened_at_once', at: at(2) })
      assert.deepEqual(
        (await listEvents(pool)).map((e) => e.kind),
        ['happened_first', 'happened_second', 'happened_at_once'],
      )
    })

    it('refuses a kind that is not snake_case', async () => {
      await assert.rejects(appendEvent(database().pool, { kind: 'Node Lost' }), RangeError)
    })
  })

  describe('withTransaction', () => {
    it('commits on success and rolls back on error, releasing the client either way', async () => {
      await withTransaction(database().pool, async (client) => {
        await upsertDeclaredNode(client, { id: 'kept', pool: 'p' })
      })
      await assert.rejects(
        withTransaction(database().pool, async (client) => {
          await upsertDeclaredNode(client, { id: 'gone', pool: 'p' })
          throw new Error('abort')
        }),
        /abort/,
      )
      assert.ok(await getNode(database().pool, 'kept'))
      assert.equal(await getNode(database().pool, 'gone'), undefined)
      assert.equal(database().pool.totalCount, database().pool.idleCount, 'every client was released')
    })

    it('runs serializable transactions when asked', async () => {
      const level = await withTransaction(
        database().pool,
        async (client) => (await client.query('SHOW transaction_isolation')).rows[0].transaction_isolation,
        { isolation: 'serializable' },
      )
      assert.equal(level, 'serializable')
    })
  })
})
