// A connection the server ends while the client is checked out but between statements (a shutdown,
// a failover, pg_terminate_backend) must not end the process with an unhandled 'error': the client's
// next statement fails as a lost connection (SQLSTATE 08006), the pool replaces it, and the gateway's
// guarded pool answers that as 503. Both pools fleetkit builds are checked: its own Client class, and
// any pool the gateway is given (guardPool).
import assert from 'node:assert/strict'
import { type AddressInfo, connect, createServer, type Server } from 'node:net'

import pg from 'pg'

import { isConnectionError } from '../../../src/checks/sqlstate.js'
import { openDatabase } from '../../../src/store/database.js'

import { guardPool } from '../../../src/store/state-guard.js'
import { stateClientClass } from '../../../src/store/state-client.js'
import { type DisposablePostgres, startDisposablePostgres } from '../../support/postgres.js'

describe('a checked-out connection the server ends between statements (real PostgreSQL)', function () {
  this.timeout(60_000)
  let postgres: DisposablePostgres
  before(async () => {
    postgres = await startDisposablePostgres()
  })
  after(async () => {
    await postgres?.stop()
  })

  async function endIt(client: pg.PoolClient): Promise<void> {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
    // Checked out, pg-pool's idle listener is gone: without one of fleetkit's the event below ends the process.
    assert.ok(client.listenerCount('error') > 0, 'a checked-out client listens for errors')
    // The server's FATAL reaches the client while nothing runs on it: its 'error' event.
    const ended = new Promise((resolve) => client.once('error', resolve))
    const admin = new pg.Client({ connectionString: postgres.url })
    await admin.connect()
    try {
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid])
    } finally {
      await admin.end()
    }
    await ended
  }

  it("fleetkit's own Client: no unhandled error, the next statement fails as 08006", async () => {
    const pool = new pg.Pool({ connectionString: postgres.url, max: 2, Client: stateClientClass(pg) })
    pool.on('error', () => undefined)
    try {
      const client = await pool.connect()
      await endIt(client)
      await assert.rejects(client.query('SELECT 1'), (error: unknown) => (error as { code?: string }).code === '08006')
      client.release(true)
      assert.equal((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one, 1)
    } finally {
      await pool.end()
    }
  })

  it("the gateway's guarded pool over a plain pg pool: no unhandled error, the next statement is STATE_UNAVAILABLE", async () => {
    const plain = new pg.Pool({ connectionString: postgres.url, max: 2 })
    plain.on('error', () => undefined)
    const pool = guardPool(plain, { onUnreachable: () => undefined })
    try {
      const client = await pool.connect()
      await endIt(client)
      await assert.rejects(
        client.query('SELECT 1'),
        (error: unknown) => (error as { code?: string }).code === 'STATE_UNAVAILABLE',
      )
      client.release(true)
    } finally {
      await plain.end()
    }
  })
})

describe('a server that goes silent without a reset (real PostgreSQL behind a proxy that stops forwarding)', function () {
  this.timeout(60_000)
  let postgres: DisposablePostgres
  let proxy: Server
  let silent = false
  before(async () => {
    postgres = await startDisposablePostgres()
    const target = new URL(postgres.url)
    // Forwards both ways until told to go silent: then it drops every byte and keeps the sockets open, as a
    // partition or a frozen host does (no FIN, no RST: only the kernel's retransmission timeout would end it).
    proxy = createServer((inbound) => {
      const outbound = connect(Number(target.port), target.hostname)
      inbound.on('data', (chunk: Buffer) => void (silent || outbound.write(chunk)))
      outbound.on('data', (chunk: Buffer) => void (silent || inbound.write(chunk)))
      const end = () => {
        inbound.destroy()
        outbound.destroy()
      }
      inbound.on('error', end).on('close', end)
      outbound.on('error', end).on('close', end)
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  })
  after(async () => {
    proxy?.close()
    await postgres?.stop()
  })

  it('with queryTimeoutMs a statement fails as a lost connection (08006) at once, and the pool serves again after', async () => {
    const url = new URL(postgres.url)
    url.port = String((proxy.address() as AddressInfo).port)
    const database = await openDatabase({ databaseUrl: url.toString(), schema: 'none', queryTimeoutMs: 500, max: 2 })
    try {
      assert.equal((await database.pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one, 1)
      silent = true
      const started = performance.now()
      const failure = await database.pool.query('SELECT 1').then(
        () => undefined,
        (error: unknown) => error,
      )
      assert.ok(isConnectionError(failure), `a lost connection, not ${String(failure)}`)
      assert.ok(performance.now() - started < 30_000, 'failed by the timeout, not by the kernel')
      silent = false
      // The silent connection was dropped, not handed back: the next statement gets a connection that works.
      assert.equal((await database.pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one, 1)
    } finally {
      silent = false
      await database.close()
    }
  })
})
