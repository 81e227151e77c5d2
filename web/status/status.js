// The status page's script: polls status.json every 3 s and redraws the tables in place (no reload).
// Every value is set with textContent or as an element property: data never becomes markup.
'use strict'

const POLL_MS = 3000

function el(tag, text, className) {
  const e = document.createElement(tag)
  if (text !== undefined && text !== null) e.textContent = String(text)
  if (className) e.className = className
  return e
}

function age(seconds) {
  if (seconds === null) return 'never'
  if (seconds < 120) return `${seconds}s ago`
  if (seconds < 7200) return `${Math.round(seconds / 60)}m ago`
  return `${Math.round(seconds / 3600)}h ago`
}

function until(iso, now) {
  if (!iso) return '-'
  const hours = (Date.parse(iso) - now) / 3600000
  if (hours < 0) return 'expired'
  return hours < 48 ? `${hours.toFixed(1)} h` : `${Math.round(hours / 24)} d`
}

function bar(used, total, unit) {
  const cell = el('td', undefined, 'num')
  if (total === null) {
    cell.textContent = '-'
    return cell
  }
  const meter = document.createElement('meter')
  meter.min = 0
  meter.max = total
  meter.value = Math.min(used, total)
  meter.high = total * 0.9
  meter.title = `${used} of ${total} ${unit}`
  cell.append(meter, el('span', ` ${used}/${total}`))
  return cell
}

function checksCell(checks) {
  if (!checks) return el('td', '-')
  if (checks.jobStatus !== 'succeeded') return el('td', 'could not run', 'fail')
  // Not applicable (a declared container's kernel checks) is shown beside the others, never as a pass or a fail.
  const na = checks.notApplicable > 0 ? `, ${checks.notApplicable} n/a` : ''
  if (checks.fail > 0) return el('td', `${checks.fail} failing${na}`, 'fail')
  if (checks.warn > 0) return el('td', `${checks.warn} warning${na}`, 'warn')
  return el('td', `${checks.pass} pass${na}`)
}

// Drifted names the parts that differ from the node's last sync; unknown is no verdict, not a fault.
function driftCell(drift) {
  if (drift.state === 'drifted') return el('td', `drifted: ${drift.parts.join(', ')}`, 'fail')
  if (drift.state === 'in_sync') return el('td', 'in sync')
  return el('td', `unknown (${drift.reason ?? '-'})`)
}

function nodeRow(n, now) {
  const tr = document.createElement('tr')
  tr.dataset.node = n.id
  tr.append(
    el('td', n.id),
    el('td', n.status, `status status-${n.status}`),
    el('td', n.schedulable ? 'yes' : 'no'),
    el('td', age(n.heartbeatAgeSeconds), 'num'),
    bar(n.reserved.cpu, n.capacity.cpu, 'vCPU'),
    bar(n.reserved.memoryMib, n.capacity.memoryMib, 'MiB'),
    bar(n.reserved.diskGib, n.capacity.diskGib, 'GiB'),
    el('td', until(n.certificateNotAfter, now), 'num'),
    el('td', n.agentVersion ?? '-'),
    el('td', n.clockSkewMs === null ? '-' : `${n.clockSkewMs} ms`, 'num'),
    el('td', n.diskFreeGb === null ? '-' : `${n.diskFreeGb} GB`, 'num'),
    checksCell(n.checks),
    el('td', n.lastSync ? `run ${n.lastSync.runId}: ${n.lastSync.state}` : '-'),
    driftCell(n.drift),
  )
  return tr
}

const HEAD = [
  'Node',
  'Status',
  'Sched',
  'Heartbeat',
  'CPU',
  'Memory',
  'Disk',
  'Cert expires',
  'Agent',
  'Clock skew',
  'Disk free',
  'Checks',
  'Last sync',
  'Drift',
]

function drawPools(pools, now) {
  const sections = pools.map((pool) => {
    const section = el('section')
    section.dataset.pool = pool.name
    section.append(el('h2', `${pool.name} (${pool.nodes.length})`))
    const table = el('table')
    const head = document.createElement('tr')
    head.append(...HEAD.map((h) => el('th', h)))
    table.append(el('thead'), el('tbody'))
    table.tHead.append(head)
    table.tBodies[0].append(...pool.nodes.map((n) => nodeRow(n, now)))
    section.append(table)
    return section
  })
  if (sections.length === 0) sections.push(el('p', 'No nodes yet.'))
  document.getElementById('pools').replaceChildren(...sections)
}

// The fleet's verdict (as `fleetkit fleet ready` judges it, from the state alone): a line for the fleet,
// one per pool, and a row per failing criterion of each node that is not ready.
function drawReadiness(readiness) {
  const verdict = document.getElementById('verdict')
  if (!readiness) {
    verdict.textContent = 'not computed by this gateway'
    verdict.className = ''
    document.getElementById('readiness-pools').replaceChildren()
    document.querySelector('#not-ready tbody').replaceChildren()
    return
  }
  verdict.textContent = readiness.ready ? 'Fleet: ready' : 'Fleet: NOT READY'
  verdict.className = readiness.ready ? 'ready' : 'fail'
  document
    .getElementById('readiness-pools')
    .replaceChildren(
      ...readiness.pools.map((p) =>
        el(
          'li',
          `${p.pool}: ${p.ready ? 'ready' : 'not ready'} (${p.readyNodes} of ${p.nodes})`,
          p.ready ? '' : 'fail',
        ),
      ),
    )
  document.querySelector('#not-ready tbody').replaceChildren(
    ...readiness.failing.flatMap((n) =>
      n.failures.map((f) => {
        const tr = document.createElement('tr')
        tr.dataset.notReady = n.nodeId
        tr.append(
          el('td', n.nodeId),
          el('td', n.pool),
          el('td', f.criterion),
          el('td', f.code, 'fail'),
          el('td', f.detail),
          el('td', f.next),
        )
        return tr
      }),
    ),
  )
}

function drawGateway(gateway) {
  const figures = [
    ...Object.entries(gateway.requestsPerSecond).map(([listener, rate]) => [`${listener} requests/s`, rate]),
    ['latency p50', gateway.latencySeconds.p50 === null ? '-' : `≤ ${gateway.latencySeconds.p50 * 1000} ms`],
    ['latency p99', gateway.latencySeconds.p99 === null ? '-' : `≤ ${gateway.latencySeconds.p99 * 1000} ms`],
    ['over', `${gateway.windowSeconds} s`],
  ]
  document.getElementById('gateway-figures').replaceChildren(
    ...figures.map(([name, value]) => {
      const d = el('div')
      d.append(el('dt', name), el('dd', value))
      return d
    }),
  )
}

function drawEvents(events) {
  document.querySelector('#events tbody').replaceChildren(
    ...events.map((e) => {
      const tr = document.createElement('tr')
      tr.append(el('td', e.at), el('td', e.kind), el('td', e.nodeId ?? '-'), el('td', e.summary))
      return tr
    }),
  )
}

function setState(text, down) {
  const state = document.getElementById('state')
  state.textContent = text
  state.classList.toggle('down', down)
}

async function refresh() {
  try {
    const response = await fetch('status.json', { cache: 'no-store', credentials: 'same-origin' })
    const body = await response.json()
    if (!response.ok) {
      setState(
        `The gateway answered ${response.status} ${body.error?.code ?? ''}: ${body.error?.message ?? ''} (retrying)`,
        true,
      )
      return
    }
    const now = Date.parse(body.generatedAt)
    drawReadiness(body.readiness)
    drawPools(body.pools, now)
    drawGateway(body.gateway)
    drawEvents(body.events)
    const total = body.pools.reduce((sum, p) => sum + p.nodes.length, 0)
    setState(`${total} node(s) in ${body.pools.length} pool(s), updated ${new Date(now).toLocaleTimeString()}`, false)
  } catch (error) {
    setState(`The gateway did not answer (${error.message}); retrying`, true)
  } finally {
    setTimeout(refresh, POLL_MS)
  }
}

refresh()
