import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { access, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'

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
    assert.ok(urls.length >= 5)
    for (const url of urls) {
      const [path, anchor] = url.split('#')
      assert.equal(path, 'docs/runbooks.md')
      assert.ok(anchors.has(anchor!), `${url}: no heading with that anchor in docs/runbooks.md`)
    }
  })

  describe('against a real gateway', () => {
    let server: DisposablePostgres
    let gw: TestGateway
    let exposed: Set<string>
    before(async () => {
      server = await startDisposablePostgres()
      gw = await startTestGateway({ postgresUrl: server.url })
      const text = await (await fetch(`${gw.metricsUrl}/metrics`)).text()
      exposed = new Set(
        [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) =>
          type === 'histogram' || type === 'summary'
            ? [name!, `${name}_bucket`, `${name}_sum`, `${name}_count`]
            : [name!],
        ),
      )
    })
    after(async () => {
      await gw?.close()
      await server?.stop()
    })

    it('the tokenizer finds metric names, not functions, labels or keywords', () => {
      assert.deepEqual(
        metricNames(
          'sum by (pool) (rate(a_total{status="503"}[5m])) > 0 or histogram_quantile(0.9, b_bucket) unless up',
        ),
        ['a_total', 'b_bucket', 'up'],
      )
    })

    it('every metric the alert rules use is served on /metrics', async () => {
      const names = ruleExprs(await readFile(rulesFile, 'utf8')).flatMap(metricNames)
      assert.ok(names.length >= 5)
      const missing = names.filter((n) => !ALLOWED.has(n) && !exposed.has(n))
      assert.deepEqual(missing, [], `alert rules use metrics the gateway does not serve`)
    })

    it('every metric the dashboard queries is served on /metrics', async () => {
      const names = dashboardExprs(await readFile(dashboardFile, 'utf8')).flatMap(metricNames)
      assert.ok(names.length >= 10)
      const missing = names.filter((n) => !ALLOWED.has(n) && !exposed.has(n))
      assert.deepEqual(missing, [], `the dashboard uses metrics the gateway does not serve`)
    })
  })
})
