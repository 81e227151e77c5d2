import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

import { X509Certificate } from 'node:crypto'

import { systemClock } from '../../../src/config/clock.js'
import { rotateCa } from '../../../src/lifecycle/ca/ca-rotation.js'
import { writeArchiveConfig } from '../../../src/store/embedded/archive-dir.js'
import { writeArchiveRemote, writeShipStatus } from '../../../src/store/embedded/archive-remote.js'
import { embeddedServerPaths } from '../../../src/store/embedded/paths.js'
import { latestRotation } from '../../../src/store/pki/ca-rotations.js'
import { createSyncRun, finishSyncRun, getSyncRun, setSyncNode } from '../../../src/store/sync/sync-ledger.js'
import { clearReconcileStop, recordReconcileStop } from '../../../src/store/sync/reconcile-stops.js'
import { startTestGateway, type TestGateway } from '../../support/gateway.js'
import { startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'

const run = promisify(execFile)
const root = join(import.meta.dirname, '../../..')
const promtool = join(root, '.cache/prometheus/usr/bin/promtool')
const rulesFile = join(root, 'monitoring/prometheus/fleetkit-alerts.yml')
const dashboardFile = join(root, 'monitoring/grafana/fleetkit.json')

// PromQL words that are not metric names: functions, keywords, aggregations.
const PROMQL_WORDS = new Set(
  'sum min max avg count by without on ignoring group_left group_right and or unless bool offset rate irate increase delta deriv histogram_quantile topk bottomk abs clamp_min clamp_max time vector scalar le quantile_over_time max_over_time min_over_time avg_over_time absent label_replace'.split(
    ' ',
  ),
)
const ALLOWED = new Set(['up', 'ALERTS'])

/** Metric names in a PromQL expression: identifiers not inside {...}, quotes or [...], not functions or keywords. */
function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"[^"]*"|'[^']*'/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ')
  const names = new Set<string>()
  for (const m of stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const word = m[0]
    const after = stripped.slice((m.index ?? 0) + word.length).trimStart()
    if (PROMQL_WORDS.has(word) || after.startsWith('(') || /^\d/.test(word)) continue
    names.add(word)
  }
  return [...names]
}

async function promtoolPath(): Promise<string> {
  try {
    await access(promtool)
  } catch {
    assert.fail(`promtool is missing at ${promtool}: run scripts/install-test-deps (or scripts/install-promtool)`)
  }
  return promtool
}

function ruleExprs(yaml: string): string[] {
  return [...yaml.matchAll(/^\s+expr: (.*)$/gm)].map((m) => m[1]!.replace(/^'|'$/g, ''))
}

function dashboardExprs(json: string): string[] {
  const exprs: string[] = []
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk)
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) {
        if (k === 'expr' && typeof x === 'string') exprs.push(x)
        else walk(x)
      }
  }
  walk(JSON.parse(json))
  return exprs
}

/** The metric names in the first column of docs/gateway.md's metrics table (`name{labels}`, or several names). */
function documentedMetrics(markdown: string): string[] {
  const firstCells = [...markdown.matchAll(/^\| (`fleetkit_[^|]*)\|/gm)].map((m) => m[1]!)
  return firstCells.flatMap((cell) => [...cell.matchAll(/`(fleetkit_[a-z0-9_]+)/g)].map((m) => m[1]!))
}

describe('monitoring: alert rules and dashboard', function () {
  this.timeout(60_000)

  it('promtool checks the alert rules and passes their unit tests', async () => {
    const bin = await promtoolPath()
    await run(bin, ['check', 'rules', rulesFile])
    const { stdout } = await run(bin, ['test', 'rules', 'fleetkit-alerts.test.yml'], {
      cwd: join(root, 'monitoring/prometheus'),
    })
    assert.match(stdout, /SUCCESS/)
  })

  it('every runbook_url points to an anchor in docs/runbooks.md', async () => {
    const runbooks = await readFile(join(root, 'docs/runbooks.md'), 'utf8')
    const anchors = new Set(
      [...runbooks.matchAll(/^#+ (.*)$/gm)].map((m) =>
        m[1]!
          .toLowerCase()
          .replace(/[^\w\- ]/g, '')
          .replace(/ /g, '-'),
      ),
    )
    const urls = [...(await readFile(rulesFile, 'utf8')).matchAll(/runbook_url: '([^']*)'/g)].map((m) => m[1]!)
    assert.ok(urls.length >= 9)
    for (const url of urls) {
      const [path, anchor] = url.split('#')
      assert.equal(path, 'docs/runbooks.md')
      assert.ok(anchors.has(anchor!), `${url}: no heading with that anchor in docs/runbooks.md`)
    }
  })

  it("docs/monitoring.md's table lists every alert of the rules file, and no other", async () => {
    const rules = [...(await readFile(rulesFile, 'utf8')).matchAll(/^\s+- alert: (\S+)$/gm)].map((m) => m[1]!)
    const monitoring = await readFile(join(root, 'docs/monitoring.md'), 'utf8')
    const documented = [...monitoring.matchAll(/^\| `(Fleetkit\w+)` \|/gm)].map((m) => m[1]!)
    assert.ok(rules.length >= 14)
    assert.deepEqual([...documented].sort(), [...rules].sort())
  })

  describe('against a real gateway', () => {
    let server: DisposablePostgres
    let gw: TestGateway
    let text: string
    let exposed: Set<string>
    /** Metric names with at least one sample (a gauge read from the state has none until there is a row). */
    let sampled: Set<string>
    let archiveState: string
    before(async () => {
      server = await startDisposablePostgres()
      // An embedded state with an off-host archive: five local segments, the third the newest shipped.
      archiveState = await mkdtemp(join(tmpdir(), 'fleetkit-monitoring-archive-'))
      const paths = embeddedServerPaths(join(archiveState, 'state'))
      await mkdir(join(archiveState, 'archive', 'wal'), { recursive: true })
      await mkdir(paths.root, { recursive: true })
      for (const n of [1, 2, 3, 4, 5])
        await writeFile(join(archiveState, 'archive', 'wal', `00000001000000000000000${n}`), '')
      await writeArchiveConfig(paths, { dir: join(archiveState, 'archive'), enabledAt: '2026-12-06T21:00:00.000Z' })
      await writeArchiveRemote(paths, {
        url: 'ssh://archive@vault.example.net/srv/fleetkit-archive',
        user: 'archive',
        host: 'vault.example.net',
        port: 22,
        path: '/srv/fleetkit-archive',
        hostKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl',
        identityFile: '/etc/fleetkit/archive_ed25519',
        addedAt: '2026-12-06T21:00:00.000Z',
      })
      await writeShipStatus(paths, {
        lastShippedWal: '000000010000000000000003',
        lastSuccessAt: '2026-12-06T21:02:00.000Z',
        lastAttemptAt: '2026-12-06T21:02:00.000Z',
        lastError: null,
      })
      // The PKI set is reloaded when the test says so, after the rotation began.
      gw = await startTestGateway({
        postgresUrl: server.url,
        tuning: { pkiReloadMs: 3_600_000 },
        archiveStateDir: join(archiveState, 'state'),
      })
      const pool = gw.db.pool
      // A node enrolled from the first CA: it blocks the rotation begun below.
      await gw.declareNode('web-1', { pool: 'web' })
      await gw.enroll('web-1', await gw.issueSecret('web-1'))
      // A converged sync, then one that ends partial (the latest), then a dry run and an open run, which do not count.
      const run = (kind: 'sync' | 'dry_run') =>
        createSyncRun(pool, {
          kind,
          revision: null,
          definitionSha256: 'd'.repeat(64),
          planHash: 'e'.repeat(64),
          plan: {},
          startedBy: 'ops@laptop',
          pid: process.pid,
          nodes: [
            { nodeId: 'web-1', phase: 'canary', state: 'pending' },
            { nodeId: 'web-2', phase: 'fleet', state: 'pending' },
          ],
        })
      await finishSyncRun(pool, (await run('sync')).id, 'converged')
      const partial = await run('sync')
      await setSyncNode(pool, partial.id, 'web-1', { state: 'converged' })
      await setSyncNode(pool, partial.id, 'web-2', { state: 'failed', code: 'SYNC_NODE_FAILED' })
      await finishSyncRun(pool, partial.id, 'partial')
      await finishSyncRun(pool, (await run('dry_run')).id, 'converged')
      await run('sync')
      partialFinishedAt = (await getSyncRun(pool, partial.id))!.finishedAt!
      await rotateCa({ pool, phase: 'begin', pkiDir: gw.pkiDir, clock: systemClock })
      assert.equal(await gw.gateway!.reloadPki(), 'replaced')
      text = await (await fetch(`${gw.metricsUrl}/metrics`)).text()
      exposed = new Set(
        [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) =>
          type === 'histogram' || type === 'summary'
            ? [name!, `${name}_bucket`, `${name}_sum`, `${name}_count`]
            : [name!],
        ),
      )
      sampled = new Set([...text.matchAll(/^([A-Za-z_:][A-Za-z0-9_:]*)[{ ]/gm)].map((m) => m[1]!))
    })
    let partialFinishedAt: Date
    after(async () => {
      await gw?.close()
      await server?.stop()
      if (archiveState) await rm(archiveState, { recursive: true, force: true })
    })

    /** The value of one sample, by name and exact label text (`state="blocking"`), from the scrape in before(). */
    const sample = (name: string, labels = ''): number | undefined => {
      const line = text.split('\n').find((l) => l.startsWith(labels ? `${name}{${labels}} ` : `${name} `))
      return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1))
    }

    it('the tokenizer finds metric names, not functions, labels or keywords', () => {
      assert.deepEqual(
        metricNames(
          'sum by (pool) (rate(a_total{status="503"}[5m])) > 0 or histogram_quantile(0.9, b_bucket) unless up',
        ),
        ['a_total', 'b_bucket', 'up'],
      )
    })

    it('every metric the alert rules use is served on /metrics, with a sample', async () => {
      const names = ruleExprs(await readFile(rulesFile, 'utf8')).flatMap(metricNames)
      assert.ok(names.length >= 9)
      const missing = names.filter((n) => !ALLOWED.has(n) && !exposed.has(n))
      assert.deepEqual(missing, [], `alert rules use metrics the gateway does not serve`)
      // A counter shows its first sample at its first event: no batch write has failed here.
      const unsampled = names.filter(
        (n) => !ALLOWED.has(n) && !sampled.has(n) && n !== 'fleetkit_gateway_heartbeat_flush_failures_total',
      )
      assert.deepEqual(unsampled, [], 'alert rules use metrics without a value on a gateway whose state has rows')
    })

    it("docs/gateway.md's metrics table lists every fleetkit_ metric served on /metrics, and no other", async () => {
      const documented = documentedMetrics(await readFile(join(root, 'docs/gateway.md'), 'utf8'))
      const served = [...text.matchAll(/^# TYPE (fleetkit_\S+) /gm)].map((m) => m[1]!)
      assert.ok(served.length >= 40)
      assert.deepEqual(
        served.filter((n) => !documented.includes(n)).sort(),
        [],
        'served on /metrics, missing from docs/gateway.md',
      )
      assert.deepEqual(
        documented.filter((n) => !served.includes(n)).sort(),
        [],
        'in docs/gateway.md, not served on /metrics',
      )
    })

    it("serves the off-host archive's shipping lag from the state's files", () => {
      assert.equal(sample('fleetkit_wal_archive_unshipped_segments'), 2)
      assert.equal(
        sample('fleetkit_wal_archive_ship_last_success_timestamp_seconds'),
        Date.parse('2026-12-06T21:02:00.000Z') / 1000,
      )
    })

    it('every metric the dashboard queries is served on /metrics', async () => {
      const names = dashboardExprs(await readFile(dashboardFile, 'utf8')).flatMap(metricNames)
      assert.ok(names.length >= 10)
      const missing = names.filter((n) => !ALLOWED.has(n) && !exposed.has(n))
      assert.deepEqual(missing, [], `the dashboard uses metrics the gateway does not serve`)
    })

    it('the certificate expiry gauges are those of the PKI set the gateway serves', async () => {
      const ca = new X509Certificate(await readFile(join(gw.pkiDir, 'ca.pem')))
      const serverCert = new X509Certificate(await readFile(join(gw.pkiDir, 'server.pem')))
      assert.equal(gw.gateway!.currentPkiSet().ca.fingerprintSha256, ca.fingerprint256.replace(/:/g, '').toLowerCase())
      assert.equal(
        sample('fleetkit_ca_certificate_expiry_timestamp_seconds'),
        Math.floor(new Date(ca.validTo).getTime() / 1000),
      )
      assert.equal(
        sample('fleetkit_gateway_server_certificate_expiry_timestamp_seconds'),
        Math.floor(new Date(serverCert.validTo).getTime() / 1000),
      )
    })

    it('the rotation gauges show the open rotation and the node still on the old CA', async () => {
      const rotation = await latestRotation(gw.db.pool)
      assert.equal(rotation?.status, 'begun')
      assert.equal(sample('fleetkit_ca_rotation_in_progress'), 1)
      assert.equal(
        sample('fleetkit_ca_rotation_begun_timestamp_seconds'),
        Math.floor(rotation!.begunAt.getTime() / 1000),
      )
      assert.deepEqual(
        ['renewed', 'blocking', 'cut_off'].map((state) => sample('fleetkit_ca_rotation_nodes', `state="${state}"`)),
        [0, 1, 0],
      )
    })

    it('the sync gauges show the latest finished sync: partial, with its nodes by state', () => {
      assert.equal(sample('fleetkit_sync_last_run_failed', 'outcome="partial"'), 1)
      assert.equal(sample('fleetkit_sync_last_run_failed', 'outcome="converged"'), undefined)
      assert.equal(sample('fleetkit_sync_last_run_timestamp_seconds'), Math.floor(partialFinishedAt.getTime() / 1000))
      assert.deepEqual(
        ['converged', 'failed', 'pending'].map((state) => sample('fleetkit_sync_last_run_nodes', `state="${state}"`)),
        [1, 1, undefined],
      )
    })

    it('the reconcile gauge is 1 while a stop is open in the state, 0 once a person cleared it', async () => {
      const scrape = async () => {
        const body = await (await fetch(`${gw.metricsUrl}/metrics`)).text()
        return body.split('\n').find((l) => l.startsWith('fleetkit_reconcile_stopped '))
      }
      assert.equal(sample('fleetkit_reconcile_stopped'), 0)
      await recordReconcileStop(gw.db.pool, {
        runId: null,
        code: 'SYNC_PARTIAL_FAILURE',
        message: 'run failed',
        nodes: [],
      })
      assert.equal(await scrape(), 'fleetkit_reconcile_stopped 1')
      await clearReconcileStop(gw.db.pool, 'lead@desk')
      assert.equal(await scrape(), 'fleetkit_reconcile_stopped 0')
    })

    it('a state read that fails at scrape time keeps /metrics up with the last values', async () => {
      await gw.db.pool.query('ALTER TABLE ca_rotations RENAME TO ca_rotations_away')
      await gw.db.pool.query('ALTER TABLE sync_runs RENAME TO sync_runs_away')
      try {
        const reply = await fetch(`${gw.metricsUrl}/metrics`)
        assert.equal(reply.status, 200)
        const body = await reply.text()
        for (const line of [
          'fleetkit_ca_rotation_in_progress 1',
          'fleetkit_ca_rotation_nodes{state="blocking"} 1',
          'fleetkit_sync_last_run_failed{outcome="partial"} 1',
        ])
          assert.ok(body.split('\n').includes(line), `${line} is still served`)
        assert.match(body, /^process_cpu_user_seconds_total /m)
        assert.match(body, /^fleetkit_nodes\{/m)
      } finally {
        await gw.db.pool.query('ALTER TABLE ca_rotations_away RENAME TO ca_rotations')
        await gw.db.pool.query('ALTER TABLE sync_runs_away RENAME TO sync_runs')
      }
    })
  })
})
