// The gateway's status page (issue 23): the data it polls from a real gateway on real PostgreSQL
// (nodes by pool with heartbeat, capacity, certificate, checks and last sync; events; no secret),
// its access (loopback, or a live operator certificate on the agent listener), and the page itself
// in a real headless Chromium reacting to a drain without a reload and to the database going away. FLEETKIT_WRITE_SCREENSHOT=1 writes docs/images/status-page.png from the browser.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { Client } from 'pg'
import { chromium, type Browser } from 'playwright-core'

import { systemClock } from '../../../src/config/clock.js'
import { drainNode } from '../../../src/lifecycle/node/node-drain.js'
import { packagePath } from '../../../src/package-root.js'
import { reserveAllocation } from '../../../src/store/scheduling/allocations.js'
import { appendEvent } from '../../../src/store/events.js'
import { createJob } from '../../../src/store/scheduling/jobs.js'
import { recordNodeCapacity } from '../../../src/store/nodes/node-lifecycle.js'
import { createSyncRun, finishSyncRun, setSyncNode } from '../../../src/store/sync/sync-ledger.js'
import { runFleetkit } from '../../support/cli.js'
import { httpsJson, startTestGateway, type AgentIdentityFiles, type TestGateway } from '../../support/gateway.js'
import { startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'

const HOSTILE = '<img src=x id=injected onerror="window.__owned=1">'
const CHROMIUM = '/usr/bin/chromium'

interface Reply {
  status: number
  headers: Headers
  text: string
}

async function get(url: string): Promise<Reply> {
  const response = await fetch(url)
  return { status: response.status, headers: response.headers, text: await response.text() }
}

describe('gateway: the status page', function () {
  this.timeout(180_000)
  let pg: DisposablePostgres
  let gw: TestGateway
  let stateDir: string
  let build: AgentIdentityFiles
  let pendingSecret: string
  const status = () => `${gw.metricsUrl}/v1/operator/status`

  before(async () => {
    pg = await startDisposablePostgres()
    gw = await startTestGateway({ postgresUrl: pg.url, sweep: null })
    stateDir = await mkdtemp(join(tmpdir(), 'fleetkit-status-page-'))
    await gw.declareNode('build-1', { pool: 'build' })
    build = await gw.enroll('build-1', await gw.issueSecret('build-1'))
    await gw.declareNode('web-1', { pool: 'web' })
    await gw.enroll('web-1', await gw.issueSecret('web-1'))
    // A node with a secret issued and not yet used: the secret must never reach the page.
    await gw.declareNode('web-2', { pool: 'web' })
    pendingSecret = await gw.issueSecret('web-2')
    const pool = gw.db.pool
    await recordNodeCapacity(pool, 'build-1', { cpu: 4, memoryMib: 8192, diskGib: 80 })
    await pool.query(
      `UPDATE nodes SET schedulable = true, last_seen_at = now(), host_agent_version = '0.1.0',
              host_clock_skew_ms = 42, host_data_disk_free_gb = 37 WHERE id = 'build-1'`,
    )
    await reserveAllocation(pool, { nodeId: 'build-1', owner: 'ci', cpu: 1, memoryMib: 2048, diskGib: 10, actor: 't' })
    const job = await createJob(pool, { nodeId: 'build-1', kind: 'checks', now: new Date() })
    await pool.query(`UPDATE jobs SET status = 'succeeded', result = $2 WHERE id = $1`, [
      job.id,
      {
        checks: [
          { id: 'host:br-netfilter', status: 'pass' },
          { id: 'host:data-volume', status: 'warn' },
          { id: 'host:clock', status: 'fail', code: 'CLOCK_SKEWED' },
          { id: 'host:firewall', status: 'not_applicable' },
        ],
      },
    ])
    const run = await createSyncRun(pool, {
      kind: 'sync',
      revision: 'a'.repeat(40),
      definitionSha256: 'd'.repeat(64),
      planHash: 'e'.repeat(64),
      plan: {},
      startedBy: 't',
      pid: 1,
      nodes: [{ nodeId: 'build-1', phase: 'canary', state: 'pending' }],
    })
    await setSyncNode(pool, run.id, 'build-1', { state: 'converged' })
    await finishSyncRun(pool, run.id, 'converged')
    await appendEvent(pool, { kind: 'operator_note', nodeId: 'web-1', data: { note: HOSTILE } })
  })
  after(async () => {
    await gw?.close()
    await pg?.stop()
    if (stateDir) await rm(stateDir, { recursive: true, force: true })
  })

  it('serves the page, its script and style from the gateway with a strict Content-Security-Policy', async () => {
    const page = await get(status())
    assert.equal(page.status, 200)
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/)
    const csp = page.headers.get('content-security-policy') ?? ''
    assert.match(csp, /default-src 'none'/)
    assert.match(csp, /script-src 'self'/)
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/)
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff')
    assert.match(page.text, /<script src="status.js" defer><\/script>/)
    assert.match((await get(`${status()}.js`)).headers.get('content-type') ?? '', /^text\/javascript/)
    assert.match((await get(`${status()}.css`)).headers.get('content-type') ?? '', /^text\/css/)
  })

  it('status.json has the nodes by pool with heartbeat, capacity, reservations, checks and last sync, and the events', async () => {
    const reply = await get(`${status()}.json`)
    assert.equal(reply.status, 200, reply.text)
    const doc = JSON.parse(reply.text)
    assert.deepEqual(
      doc.pools.map((p: { name: string; nodes: { id: string }[] }) => [p.name, p.nodes.map((n) => n.id)]),
      [
        ['build', ['build-1']],
        ['web', ['web-1', 'web-2']],
      ],
    )
    const node = doc.pools[0].nodes[0]
    assert.equal(node.status, 'active')
    assert.equal(node.agentVersion, '0.1.0')
    assert.equal(node.clockSkewMs, 42)
    assert.equal(node.diskFreeGb, 37)
    assert.ok(node.heartbeatAgeSeconds >= 0 && node.heartbeatAgeSeconds < 60, JSON.stringify(node))
    assert.deepEqual(node.capacity, { cpu: 4, memoryMib: 8192, diskGib: 80 })
    assert.deepEqual(node.reserved, { cpu: 1, memoryMib: 2048, diskGib: 10, allocations: 1 })
    assert.ok(Date.parse(node.certificateNotAfter) > Date.now())
    assert.deepEqual(
      {
        status: node.checks.jobStatus,
        pass: node.checks.pass,
        warn: node.checks.warn,
        fail: node.checks.fail,
        notApplicable: node.checks.notApplicable,
      },
      { status: 'succeeded', pass: 1, warn: 1, fail: 1, notApplicable: 1 },
    )
    assert.equal(node.lastSync.state, 'converged')
    // Never judged from a heartbeat's digest: unknown, with why (docs/agent.md, "Drift").
    assert.deepEqual(node.drift, { state: 'unknown', parts: [], reason: 'not_reported', since: null })
    assert.equal(doc.pools[1].nodes[1].lastSync, null)
    assert.ok(
      doc.events.some(
        (e: { kind: string; summary: string }) => e.kind === 'operator_note' && e.summary.includes(HOSTILE),
      ),
      'the event is there, as text',
    )
    assert.ok(doc.gateway.requestsPerSecond.operator > 0, JSON.stringify(doc.gateway))
    // The verdict, from the state alone: web-2 was never synced, so the fleet is not ready.
    assert.equal(doc.readiness.ready, false)
    const web2 = doc.readiness.failing.find((n: { nodeId: string }) => n.nodeId === 'web-2')
    assert.ok(
      web2?.failures.some(
        (f: { code: string; next: string }) => f.code === 'NODE_NOT_CONVERGED' && f.next === 'fleetkit sync',
      ),
      JSON.stringify(doc.readiness),
    )
    assert.ok(doc.readiness.pools.some((p: { pool: string; ready: boolean }) => p.pool === 'web' && !p.ready))
  })

  it('no secret, secret hash or key reaches the page or its data (certificate fingerprints are public)', async () => {
    const text = [
      (await get(status())).text,
      (await get(`${status()}.js`)).text,
      (await get(`${status()}.json`)).text,
    ].join('\n')
    assert.ok(!text.includes(pendingSecret), 'the enrollment secret')
    assert.doesNotMatch(text, /PRIVATE KEY|BEGIN CERTIFICATE/)
    const hashes = await gw.db.pool.query<{ h: string }>(
      "SELECT encode(enrollment_secret_sha256, 'hex') AS h FROM nodes WHERE enrollment_secret_sha256 IS NOT NULL",
    )
    assert.ok(hashes.rows.length >= 1)
    for (const { h } of hashes.rows) assert.ok(!text.includes(h), 'a secret hash')
  })

  it('on the agent listener: refused without an operator certificate, served with one', async () => {
    const path = '/v1/operator/status.json'
    // No client certificate at all: the TLS handshake fails (alert certificate_required, or the reset
    // that follows it), so there is no HTTP answer, not a 403.
    const bare = await httpsJson(gw.agentUrl, 'GET', path, undefined, { ca: gw.caPem }).then(
      (reply) => assert.fail(`answered ${reply.status} without a client certificate`),
      (error: unknown) => error as NodeJS.ErrnoException,
    )
    assert.match(`${bare.code} ${bare.message}`, /CERTIFICATE_REQUIRED|certificate required|ECONNRESET/i)
    const asAgent = await httpsJson(gw.agentUrl, 'GET', path, undefined, {
      ca: gw.caPem,
      key: build.keyPem,
      cert: build.certificatePem,
    })
    assert.equal(asAgent.status, 403)
    assert.equal((asAgent.body.error as { code: string }).code, 'operator_refused')
    const out = join(stateDir, 'op')
    const issued = await runFleetkit(['ca', 'operator-cert', 'alice', '--out', out, '--pki-dir', gw.pkiDir, '--json'], {
      env: { DATABASE_URL: gw.db.url, FLEETKIT_STATE_DIR: stateDir },
    })
    assert.equal(issued.code, 0, issued.stdout + issued.stderr)
    const tls = {
      ca: gw.caPem,
      key: await readFile(join(out, 'alice.key'), 'utf8'),
      cert: await readFile(join(out, 'alice.pem'), 'utf8'),
    }
    const asOperator = await httpsJson(gw.agentUrl, 'GET', path, undefined, tls)
    assert.equal(asOperator.status, 200, JSON.stringify(asOperator.body))
    assert.equal((asOperator.body.pools as unknown[]).length, 2)
  })

  describe('in a real headless Chromium', function () {
    let browser: Browser | undefined
    before(async function () {
      assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: run scripts/install-test-deps (Debian's chromium)`)
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          '--disable-dev-shm-usage',
        ],
      })
    })
    after(async () => {
      await browser?.close()
    })

    it('shows the nodes, escapes what it shows, and reacts to a drain without reloading', async () => {
      const page = await browser!.newPage({ viewport: { width: 1280, height: 800 } })
      const errors: string[] = []
      page.on('pageerror', (error) => errors.push(error.message))
      await page.goto(status())
      await page.waitForSelector('tr[data-node="build-1"]')
      assert.equal(await page.locator('tr[data-node="build-1"] td.status').textContent(), 'active')
      assert.equal(await page.locator('section[data-pool="web"] tbody tr').count(), 2)
      // A check that does not apply is shown beside the failing one, never counted as a pass or a fail.
      assert.match((await page.locator('tr[data-node="build-1"]').textContent()) ?? '', /1 failing, 1 n\/a/)
      assert.equal(await page.locator('#verdict').textContent(), 'Fleet: NOT READY')
      assert.ok((await page.locator('tr[data-not-ready="web-2"]').count()) >= 1, 'web-2 listed as not ready')
      assert.match((await page.locator('#events tbody').textContent()) ?? '', /<img src=x id=injected/)
      assert.equal(await page.locator('#injected').count(), 0, 'the hostile text made no element')
      assert.equal(await page.evaluate(() => (window as unknown as { __owned?: number }).__owned), undefined)
      // A marker survives only if the page is never reloaded.
      await page.evaluate(() => {
        ;(window as unknown as { __marker: string }).__marker = 'kept'
      })
      await drainNode({ pool: gw.db.pool, nodeId: 'build-1', actor: 'test', clock: systemClock })
      await page.waitForFunction(
        () => document.querySelector('tr[data-node="build-1"] td.status')?.textContent === 'draining',
        undefined,
        { timeout: 30_000 },
      )
      assert.equal(await page.evaluate(() => (window as unknown as { __marker?: string }).__marker), 'kept')
      assert.match((await page.locator('#events tbody').textContent()) ?? '', /node_draining/)
      if (process.env.FLEETKIT_WRITE_SCREENSHOT === '1') {
        await mkdir(packagePath('docs', 'images'), { recursive: true })
        await page.screenshot({ path: packagePath('docs', 'images', 'status-page.png'), fullPage: true })
      }
      assert.deepEqual(errors, [])
    })

    it('says the database is away while it is, keeps polling, and recovers by itself', async () => {
      const page = await browser!.newPage()
      await page.goto(status())
      await page.waitForSelector('tr[data-node="build-1"]')
      // The database refuses the gateway (no new connections, the open ones ended): the same server
      // keeps running for every other file, and its port stays its own.
      const admin = new Client({ connectionString: pg.url })
      await admin.connect()
      const database = admin.escapeIdentifier(gw.db.name)
      try {
        await admin.query(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS false`)
        await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [gw.db.name])
        await page.waitForFunction(() => document.getElementById('state')?.classList.contains('down'), undefined, {
          timeout: 60_000,
        })
        assert.match((await page.locator('#state').textContent()) ?? '', /503 state_unavailable/)
        assert.equal((await get(status())).status, 200, 'the page itself needs no database')
      } finally {
        await admin.query(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS true`)
        await admin.end()
      }
      await page.waitForFunction(() => !document.getElementById('state')?.classList.contains('down'), undefined, {
        timeout: 60_000,
      })
      assert.equal(await page.locator('tr[data-node="build-1"]').count(), 1)
    })
  })
})
