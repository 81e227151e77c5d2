// The real `fleetkit demo` (the built CLI when current): a run killed mid-way (SIGKILL, so nothing
// of its own cleanup runs) leaves its processes and directory, which the next run finds and removes
// before it runs to its end; its steps are checked one by one and its --json summary against its
// schema. Interrupted with Ctrl-C (SIGINT) mid-way, it ends 130. After each: no process, port or file left.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { agentBundle } from '../support/agent-bundle.js'
import { assertMatchesOutputSchema, fleetkitEntry } from '../support/cli.js'
import { eventually } from '../support/eventually.js'
import { overlayEnv, type RunningProcess, startProcess } from '../support/process.js'

/** Live processes (not zombies) whose command line names `path`. */
function processesNaming(path: string): string[] {
  const found: string[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ')
      if (cmdline.includes(path)) found.push(`${entry}: ${cmdline.slice(0, 160)}`)
    } catch {
      // gone meanwhile
    }
  }
  return found
}

/** Whether something accepts connections on 127.0.0.1:PORT. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port })
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/**
 * The processes listening on TCP `port` (its socket's inode in /proc/net/tcp*, then each process's descriptors)
 * whose command line or environment names `path`: the demo's own. A port the demo printed and freed may be taken
 * again by another test's server meanwhile (the suite runs in parallel workers), which is nothing left behind.
 */
function demoListeners(port: number, path: string): string[] {
  const hexPort = `:${port.toString(16).toUpperCase().padStart(4, '0')}`
  const inodes = new Set<string>()
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/)
      // local address, state 0A (LISTEN), inode
      if (f.length > 9 && f[1]!.endsWith(hexPort) && f[3] === '0A') inodes.add(`socket:[${f[9]}]`)
    }
  }
  const found: string[] = []
  for (const pid of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      if (!readdirSync(`/proc/${pid}/fd`).some((fd) => inodes.has(readlinkOrEmpty(`/proc/${pid}/fd/${fd}`)))) continue
      const named = ['cmdline', 'environ'].some((f) => readFileSync(`/proc/${pid}/${f}`, 'utf8').includes(path))
      if (named)
        found.push(`${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').slice(0, 160)}`)
    } catch {
      // gone meanwhile
    }
  }
  return found
}

function readlinkOrEmpty(path: string): string {
  try {
    return readlinkSync(path)
  } catch {
    return ''
  }
}

/** Every loopback port the demo printed (PostgreSQL, the gateway's listeners, the mirror, the stub). */
function printedPorts(text: string): number[] {
  return [...new Set([...text.matchAll(/127\.0\.0\.1:(\d{2,5})/g)].map((m) => Number(m[1])))]
}

describe('fleetkit demo: the whole of fleetkit on loopback, and nothing left behind', function () {
  this.timeout(240_000)
  let tmp: string
  const started: RunningProcess[] = []

  before(async () => {
    await agentBundle()
  })

  beforeEach(async () => {
    // The demo's workspace goes under TMPDIR: a private one, so what is left is this test's alone.
    tmp = await mkdtemp(join(tmpdir(), 'fleetkit-demo-test-'))
    // Run as root, the embedded PostgreSQL runs as `postgres`, which must pass through it (as through /tmp).
    await chmod(tmp, 0o711)
  })

  afterEach(async () => {
    await Promise.all(started.splice(0).map((p) => p.stop('SIGKILL')))
    await rm(tmp, { recursive: true, force: true })
  })

  function demo(args: string[]): RunningProcess {
    const run = startProcess(process.execPath, [fleetkitEntry(), 'demo', ...args], {
      env: overlayEnv({ TMPDIR: tmp, DATABASE_URL: undefined, FLEETKIT_STATE_DIR: undefined }),
    })
    started.push(run)
    return run
  }

  const output = (run: RunningProcess) => run.stdout() + run.stderr()

  async function assertNothingLeft(text: string): Promise<void> {
    assert.deepEqual(processesNaming(tmp), [], 'no process of the demo is left')
    const ports = printedPorts(text)
    assert.ok(ports.length >= 5, `the demo printed its ports: ${ports.join(', ')}`)
    for (const port of ports)
      if (await listening(port))
        assert.deepEqual(demoListeners(port, tmp), [], `nothing of the demo listens on 127.0.0.1:${port}`)
    // tsx-*: tsx's compile cache, when the entry is bin/dev.js (the source newer than the build).
    assert.deepEqual(
      readdirSync(tmp).filter((name) => !name.startsWith('tsx-')),
      [],
      'no file of the demo is left',
    )
  }

  it('a killed run leaves its fleet; the next run removes it, runs every step to its end and leaves nothing', async () => {
    const killed = demo([])
    // Step 5 starts the agents; once step 6 is printed they run (on a loaded machine, well after step 5's title).
    await eventually('the killed run to start its agents', () => output(killed).includes('[6/11]'), {
      timeoutMs: 120_000,
      stop: () => (killed.exit() ? `it exited: ${output(killed)}` : undefined),
    })
    await killed.stop('SIGKILL')
    const [staleDir] = readdirSync(tmp).filter((name) => name.startsWith('fleetkit-demo-'))
    assert.match(staleDir ?? '', /^fleetkit-demo-/)
    assert.ok(processesNaming(tmp).length >= 3, 'the killed run left its gateway, agents and PostgreSQL running')

    const run = demo(['--json'])
    const ended = await run.exited
    const steps = run.stderr()
    assert.equal(ended.code, 0, steps)
    // Each step, in order, with what it shows.
    const expected: [string, RegExp][] = [
      [
        '[1/11] A private workspace',
        new RegExp(`removed 1 demo directory\\(ies\\) a killed run left: ${join(tmp, staleDir!)}`),
      ],
      ['[2/11] Pack and sign', /fleetkit release sign {3}-> SHA256SUMS\.sig, public key [A-Za-z0-9+/]{43}=/],
      ['[3/11] Start the gateway', /fleetkit gateway serve {3}-> enroll https:\/\/127\.0\.0\.1:\d+/],
      [
        '[4/11] Provision a node per pool',
        /fleetkit node provision db-1 {3}-> server \d+ \(ccx13 in fsn1\).*release verified, agent installed, enrolled/,
      ],
      [
        '[5/11] Start each agent',
        /3 agents heartbeat every second over mTLS[\s\S]*build-1 +build +fsn1 +active +no +\d+s ago +\d+\.\d+\.\d+ /,
      ],
      ['[6/11] Run the host checks', /fleetkit node check build-1 {3}-> job [0-9a-f]{8}… leased and succeeded/],
      [
        '[7/11] Admit them',
        // build-1 offers its cx32 less the host reserve (examples/fleet.yaml), never the whole machine.
        /fleetkit node admit build-1(?: --accept-warn [a-z]+:[a-z0-9-]+)* {3}-> build-1: admitted, schedulable with cpu 3\.5, memory 7168 MiB, disk 60 GiB\n[\s\S]*db-1 +database +fsn1 +active +yes .* 1\/1\.5 +1024\/7168 +10\/60 /,
      ],
      ['[8/11] Drain build-1', /node_draining +build-1[\s\S]*node_undrained +build-1[\s\S]*node_admitted +build-1/],
      ['[9/11] Silence db-1', /ca_rotation_begun[\s\S]*certificate_renewed +(build-1|app-1)/],
      [
        '[10/11] Wait for the sweep',
        /lost .* 1 allocation\(s\) stranded, a person decides: fleetkit alloc release --stranded db-1 --yes[\s\S]*node_lost +db-1 .*stranded_allocations=1/,
      ],
      ['[11/11] Complete the CA rotation', /ca_rotation_completed .*cut_off=\["db-1"\]/],
    ]
    let rest = steps
    for (const [heading, shows] of expected) {
      const at = rest.indexOf(heading)
      assert.ok(at >= 0, `step "${heading}" in order; output:\n${steps}`)
      rest = rest.slice(at)
      const next = rest.indexOf('\n[', 1)
      const body = next === -1 ? rest : rest.slice(0, next)
      assert.match(body, shows, `step "${heading}" shows ${shows}`)
    }
    assert.match(steps, /Done: every process the demo started is stopped and its directory removed\./)

    const json = JSON.parse(run.stdout())
    assertMatchesOutputSchema('demo', json)
    const result = json.result
    assert.equal(result.staleRemoved, 1)
    assert.equal(result.steps.length, 11)
    assert.deepEqual(
      result.nodes.map((n: { id: string; status: string; schedulable: boolean }) => [n.id, n.status, n.schedulable]),
      [
        ['app-1', 'active', true],
        ['build-1', 'active', true],
        ['db-1', 'lost', false],
      ],
    )
    // The database pool is stateful (examples/fleet.yaml): db-1's allocation is stranded, not released.
    assert.deepEqual(result.lost, { nodeId: 'db-1', releasedAllocations: 0, strandedAllocations: 1, fencedJobs: 0 })
    assert.notEqual(result.caRotation.oldCaSha256, result.caRotation.newCaSha256)
    assert.equal(result.caRotation.revoked, 1, "db-1's old-CA certificate")
    assert.ok(result.checks.every((c: { passed: number; total: number }) => c.total === 7 && c.passed >= 6))
    assert.equal(result.cleanedUp, true)
    await assertNothingLeft(output(killed) + steps)
  })

  it('Ctrl-C mid-run stops every process it started, removes its directory and exits 130', async () => {
    const run = demo([])
    // Once step 6 is printed the agents of step 5 run (on a loaded machine, well after step 5's title).
    await eventually('the demo to start its agents', () => run.stdout().includes('[6/11]'), {
      timeoutMs: 120_000,
      stop: () => (run.exit() ? `it exited: ${output(run)}` : undefined),
    })
    assert.ok(processesNaming(tmp).length >= 3, 'the gateway, the agents and PostgreSQL run')
    run.child.kill('SIGINT')
    const ended = await run.exited
    assert.equal(ended.code, 130, output(run))
    assert.match(run.stderr(), /Error \(COMMAND_INTERRUPTED\): stopped by SIGINT/)
    await assertNothingLeft(output(run))
  })
})
