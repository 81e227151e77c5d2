// Connection floods on the unauthenticated enrollment listener (issue 12, item 4): under a 1,024
// descriptor limit (prlimit on the gateway process, as systemd's default would be), 1,000 idle TLS
// connections from many source addresses do not stop enrolled agents' heartbeats; the caps close
// what is over them, the idle timeout frees the rest, and enrollment works again afterwards.
// And on the agent listener (issue 20, item 2): 1,100 idle connections from one source are held to
// its per-source cap; other agents' heartbeats and a PKI reload keep working.
import assert from 'node:assert/strict'
import { readdir, readFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { connect as netConnect } from 'node:net'
import { connect, type TLSSocket } from 'node:tls'

import { runFleetkit } from '../../support/cli.js'
import { eventually } from '../../support/eventually.js'
import { startTestGateway, type AgentIdentityFiles, type TestGateway } from '../../support/gateway.js'
import { makeCsr, nodeKey } from '../../support/pki.js'
import { startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'
import { TEST_HOST_FACTS } from '../../support/host-facts.js'

const FACTS = TEST_HOST_FACTS

interface Flooder {
  socket: TLSSocket
  secured: boolean
  closed: boolean
}

/** One idle TLS connection from `localAddress` (any 127.x.y.z is this host's loopback on Linux). */
function idleConnection(port: number, localAddress: string, ca: string): Flooder {
  const tcp = netConnect({ host: '127.0.0.1', port, localAddress })
  tcp.on('error', () => undefined)
  const socket = connect({ socket: tcp, ca, servername: 'localhost' })
  const f: Flooder = { socket, secured: false, closed: false }
  socket.on('secureConnect', () => {
    f.secured = true
  })
  socket.on('error', () => undefined)
  socket.on('close', () => {
    f.closed = true
  })
  return f
}

/** A heartbeat with a deadline: a starved gateway shows up as a timeout, not a hang. */
function heartbeat(gw: TestGateway, identity: AgentIdentityFiles): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ facts: FACTS })
    const req = httpsRequest(
      new URL('/v1/agent/heartbeat', gw.agentUrl),
      {
        method: 'POST',
        ca: gw.caPem,
        key: identity.keyPem,
        cert: identity.certificatePem,
        agent: false,
        timeout: 5000,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      },
    )
    req.on('timeout', () => req.destroy(new Error('heartbeat timed out')))
    req.on('error', reject)
    req.end(body)
  })
}

function metricsText(gw: TestGateway): Promise<string> {
  return new Promise((resolve, reject) => {
    httpRequest(`${gw.metricsUrl}/metrics`, (res) => {
      let text = ''
      res.on('data', (c: Buffer) => {
        text += c.toString()
      })
      res.on('end', () => resolve(text))
    })
      .on('error', reject)
      .end()
  })
}

describe('gateway faults: idle connection flood on the enrollment listener', function () {
  this.timeout(240_000)
  let postgres: DisposablePostgres
  let gw: TestGateway
  const flood: Flooder[] = []
  before(async () => {
    postgres = await startDisposablePostgres()
    gw = await startTestGateway({
      postgresUrl: postgres.url,
      mode: 'process',
      wrapper: ['prlimit', '--nofile=1024:1024', '--'],
      env: {
        // Longer than the flood takes to connect (1,100 TLS handshakes from this process, seconds under
        // load): a shorter timeout frees the first connections while the last are still being accepted,
        // and the count of connections held at once below would add both.
        FLEETKIT_ENROLL_IDLE_SECONDS: '20',
        // 512 enrollment + 256 agent connections + 256 in reserve: what fits under 1,024 (else GATEWAY_DESCRIPTOR_LIMIT).
        FLEETKIT_AGENT_MAX_CONNECTIONS: '256',
        FLEETKIT_LOG_LEVEL: 'info',
        ...(JSON.parse(process.env.FLOOD_TEST_ENV ?? '{}') as Record<string, string>),
      },
    })
  })
  after(async () => {
    for (const f of flood) f.socket.destroy()
    await gw?.close()
    await postgres?.stop()
  })

  it('1,000 idle TLS connections under a 1,024 descriptor limit do not stop heartbeats; the caps and the idle timeout free them', async () => {
    const limits = await readFile(`/proc/${gw.child!.pid}/limits`, 'utf8')
    assert.match(limits, /Max open files\s+1024\s+1024/, 'the gateway runs under a 1,024 descriptor limit')
    const agents: AgentIdentityFiles[] = []
    for (const id of ['node-1', 'node-2', 'node-3']) {
      await gw.declareNode(id)
      agents.push(await gw.enroll(id, await gw.issueSecret(id)))
    }
    const port = Number(new URL(gw.enrollUrl).port)
    // 1,000 connections from 40 source addresses, 25 each (under the per-source cap of 64, over the total cap of 512).
    for (let i = 0; i < 1000; i++) flood.push(idleConnection(port, `127.0.1.${2 + (i % 40)}`, gw.caPem))
    // And 100 from one address: the per-source cap.
    const oneSource = Array.from({ length: 100 }, () => idleConnection(port, '127.0.2.1', gw.caPem))
    flood.push(...oneSource)
    await eventually(
      'every flood connection to be accepted or closed',
      () => flood.every((f) => f.secured || f.closed),
      { timeoutMs: 60_000, intervalMs: 100 },
    )
    const held = flood.filter((f) => !f.closed).length
    assert.ok(held <= 512, `at most the total cap is held open (${held})`)
    assert.ok(oneSource.filter((f) => !f.closed).length <= 64, 'at most the per-source cap from one address')

    // Enrolled agents keep heartbeating while the flood is held.
    for (const agent of agents) assert.equal(await heartbeat(gw, agent), 200)
    const fds = (await readdir(`/proc/${gw.child!.pid}/fd`)).length
    assert.ok(fds < 1000, `the gateway holds ${fds} descriptors, well under its limit`)
    const metrics = await metricsText(gw)
    assert.match(metrics, /fleetkit_gateway_enroll_connections_closed_total\{reason="(total_cap|source_cap)"\} [1-9]/)

    // The idle timeout (20 s here) closes the rest; then a host can enroll again.
    await eventually('the idle timeout to close the flood', () => flood.every((f) => f.closed), {
      timeoutMs: 60_000,
      intervalMs: 200,
    })
    await gw.declareNode('node-late')
    const reply = await gw.enrollPost({
      node_id: 'node-late',
      enrollment_secret: await gw.issueSecret('node-late'),
      csr_pem: await makeCsr(await nodeKey(), { name: 'CN=node-late' }),
    })
    assert.equal(reply.status, 200)
    for (const agent of agents) assert.equal(await heartbeat(gw, agent), 200)
  })
})

/** A TCP connection that never sends a byte (no TLS handshake): it holds a descriptor until the handshake deadline. */
function silentConnection(
  port: number,
  localAddress: string,
): { closed: boolean; socket: ReturnType<typeof netConnect> } {
  const socket = netConnect({ host: '127.0.0.1', port, localAddress })
  const state = { closed: false, socket }
  socket.on('error', () => undefined)
  socket.on('close', () => {
    state.closed = true
  })
  return state
}

describe('gateway faults: idle connection flood on the agent listener', function () {
  this.timeout(180_000)
  let postgres: DisposablePostgres
  let gw: TestGateway
  const flood: { closed: boolean; socket: ReturnType<typeof netConnect> }[] = []
  before(async () => {
    postgres = await startDisposablePostgres()
    gw = await startTestGateway({
      postgresUrl: postgres.url,
      mode: 'process',
      wrapper: ['prlimit', '--nofile=1024:1024', '--'],
      env: {
        // 64 + 600 + 256 in reserve = 920: fits under 1,024.
        FLEETKIT_ENROLL_MAX_CONNECTIONS: '64',
        FLEETKIT_AGENT_MAX_CONNECTIONS: '600',
        FLEETKIT_AGENT_MAX_CONNECTIONS_PER_SOURCE: '100',
        FLEETKIT_LOG_LEVEL: 'info',
      },
    })
  })
  after(async () => {
    for (const f of flood) f.socket.destroy()
    await gw?.close()
    await postgres?.stop()
  })

  it('1,100 idle connections from one source under a 1,024 limit are held to the per-source cap; heartbeats and a PKI reload keep working', async () => {
    const limits = await readFile(`/proc/${gw.child!.pid}/limits`, 'utf8')
    assert.match(limits, /Max open files\s+1024\s+1024/, 'the gateway runs under a 1,024 descriptor limit')
    const agents: AgentIdentityFiles[] = []
    for (const id of ['node-1', 'node-2', 'node-3']) {
      await gw.declareNode(id)
      agents.push(await gw.enroll(id, await gw.issueSecret(id)))
    }
    const port = Number(new URL(gw.agentUrl).port)
    for (let i = 0; i < 1100; i++) flood.push(silentConnection(port, '127.0.3.1'))
    // The gateway closes what is over the per-source cap as it accepts it; the rest wait for their handshake deadline (30 s).
    await eventually(
      'the per-source cap to close the connections over it',
      () => flood.filter((f) => !f.closed).length <= 100,
      {
        timeoutMs: 60_000,
        intervalMs: 100,
      },
    )
    const fds = (await readdir(`/proc/${gw.child!.pid}/fd`)).length
    assert.ok(fds < 1024 - 256, `the gateway holds ${fds} descriptors: its reserve is intact`)
    for (const agent of agents) assert.equal(await heartbeat(gw, agent), 200)
    assert.match(await metricsText(gw), /fleetkit_gateway_agent_connections_closed_total\{reason="source_cap"\} [1-9]/)

    // A PKI reload (a re-issued server certificate) reads its files while the flood is held.
    const run = await runFleetkit(
      ['ca', 'server-cert', '--server-name', 'localhost', '--server-name', '127.0.0.1', '--json'],
      { env: { FLEETKIT_PKI_DIR: gw.pkiDir } },
    )
    assert.equal(run.code, 0, run.stdout + run.stderr)
    const messages = () => gw.logs.map((line) => (JSON.parse(line) as { msg: string }).msg)
    await eventually('the gateway to reload its PKI set', () => messages().includes('pki_set_replaced'), {
      timeoutMs: 30_000,
      intervalMs: 100,
    })
    assert.ok(!messages().includes('pki_set_not_loaded'), gw.logs.filter((l) => l.includes('pki')).join('\n'))
    for (const agent of agents) assert.equal(await heartbeat(gw, agent), 200)
  })

  it('refuses to start when its caps do not fit under the limit, naming the numbers (GATEWAY_DESCRIPTOR_LIMIT)', async () => {
    await assert.rejects(
      startTestGateway({
        postgresUrl: postgres.url,
        mode: 'process',
        wrapper: ['prlimit', '--nofile=1024:1024', '--'],
        env: { FLEETKIT_LOG_LEVEL: 'info' },
      }),
      /Error \(GATEWAY_DESCRIPTOR_LIMIT\): the gateway needs 17152 open files \(512 enrollment \+ 16384 agent connections \+ 256 kept for the database pool and PKI files\) but its limit is 1024 \(hard 1024\)/,
    )
  })
})

describe('gateway: the TLS handshake deadline of each listener', function () {
  this.timeout(60_000)
  let postgres: DisposablePostgres
  let gw: TestGateway
  before(async () => {
    postgres = await startDisposablePostgres()
    gw = await startTestGateway({
      postgresUrl: postgres.url,
      tuning: { handshakeTimeoutMs: { enroll: 300, agent: 3000 } },
    })
  })
  after(async () => {
    await gw?.close()
    await postgres?.stop()
  })

  /**
   * A TCP connection that never starts its TLS handshake; `closed` turns true when the gateway cuts it
   * off, `openMs` is how long it was open then (from before the connect: never less than the server's deadline).
   */
  function silent(url: string): { closed: boolean; openMs: number } {
    const started = performance.now()
    const state = { closed: false, openMs: 0 }
    const socket = netConnect({ host: '127.0.0.1', port: Number(new URL(url).port) })
    socket.on('error', () => undefined)
    socket.on('close', () => {
      state.openMs = performance.now() - started
      state.closed = true
    })
    return state
  }

  it("cuts off a silent connection at the enrollment listener's short deadline, and the agent listener's only at its longer one", async () => {
    const enroll = silent(gw.enrollUrl)
    const agent = silent(gw.agentUrl)
    await eventually('the enrollment listener to cut its silent connection off', () => enroll.closed, {
      timeoutMs: 10_000,
      intervalMs: 50,
    })
    // A whole fleet reconnecting at once queues its handshakes: the agent listener waits longer for one.
    await eventually('the agent listener to cut its silent connection off', () => agent.closed, {
      timeoutMs: 20_000,
      intervalMs: 100,
    })
    // A lower bound only (a loaded machine makes timers late, never early): the agent listener did not
    // use the enrollment listener's 300 ms deadline, nor anything near it.
    assert.ok(
      agent.openMs >= 2000,
      `the agent listener cut a handshake off after ${Math.round(agent.openMs)} ms (its deadline is 3000 ms)`,
    )
  })
})
