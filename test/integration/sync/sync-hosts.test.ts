// `fleetkit sync` and `fleetkit drift` over real SSH against three stock Debian container hosts booted
// from fleetkit's own seeds (a Debian 12 canary and a Debian 13 host from worker seeds, a Debian 13
// host from an agent seed), a signed release mirror serving the real agent, a real gateway the hosts
// reach, a real PostgreSQL ledger and a Git repository holding fleet.yaml. The first test is issue
// 21's journey (docs/getting-started.md): sync converges every host and enrolls the two whose seeds
// left no agent, each heartbeats, `node admit` admits one; a second sync changes and issues nothing;
// drain, undrain and admit again.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { existsSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { parse, stringify } from 'yaml'

import { packagePath } from '../../../src/package-root.js'
import { listEvents } from '../../../src/store/events.js'
import { listNodeDrift } from '../../../src/store/nodes/node-drift.js'
import { getNode } from '../../../src/store/nodes/nodes.js'
import { getSyncRun, listSyncNodes } from '../../../src/store/sync/sync-ledger.js'
import { getCanaryProof } from '../../../src/store/scheduling/transition-facts.js'
import {
  type ContainerHost,
  type HostRelease,
  assertHostsAvailable,
  OPERATOR_ADDRESS,
  type OperatorKey,
  startContainerHosts,
} from '../../hosts/index.js'
import { generateOperatorKey } from '../../hosts/keys.js'
import { sshOptions } from '../../hosts/ssh.js'
import { agentBundle } from '../../support/agent-bundle.js'
import { assertMatchesOutputSchema, fleetkitEntry, runFleetkit } from '../../support/cli.js'
import { eventually } from '../../support/eventually.js'
import { type TestGateway, startTestGateway } from '../../support/gateway.js'
import { type FreshDatabase, startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'
import { overlayEnv, runProcess, startProcess } from '../../support/process.js'
import { TEST_HARNESS_VARS } from '../roles/role-runs.js'
import { type ReleaseMirror, startReleaseMirror } from '../roles/release-mirror.js'

/** Each host: its Debian release and the kind of fleetkit seed it boots from. */
const HOSTS: { name: string; release: HostRelease; seed: 'worker' | 'agent' }[] = [
  { name: 'sync-1', release: 'bookworm', seed: 'worker' },
  { name: 'sync-2', release: 'trixie', seed: 'agent' },
  { name: 'sync-3', release: 'trixie', seed: 'worker' },
]

/** The real agent bundle prints fleetkit's version: the release that ships it is that version. */
const VERSION = (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version

interface Fleet {
  release: { url: string; publicKey: string; version: string; caFile?: string }
  nodes: Record<string, unknown>[]
  [key: string]: unknown
}

describe('fleetkit sync and drift on three container hosts', function () {
  // The journey's first sync converges three fresh hosts and waits for three enrollments: minutes on a loaded machine.
  this.timeout(1_800_000)
  let dir: string
  let repo: string
  let server: DisposablePostgres
  let db: FreshDatabase
  let gw: TestGateway
  let mirror: ReleaseMirror
  let hosts: ContainerHost[]
  let operator: OperatorKey
  /** Where each node is declared before its host exists (a provider gives the address after the seed). */
  let addresses: Record<string, string> = Object.fromEntries(HOSTS.map((h) => [h.name, `${h.name}.fleet.internal`]))
  let env: NodeJS.ProcessEnv
  const shas: Record<string, string> = {}

  const fleetPath = () => join(repo, 'fleet.yaml')
  const git = (...args: string[]) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' }).trim()

  function baseFleet(): Fleet {
    return {
      version: 1,
      fleet: 'synctest',
      // The gateway listens on every address here: the hosts dial it on the bridge (the operator address).
      gateway: {
        url: `https://${OPERATOR_ADDRESS}:${new URL(gw.agentUrl).port}`,
        enrollUrl: `https://${OPERATOR_ADDRESS}:${new URL(gw.enrollUrl).port}`,
      },
      // The agent seed downloads the release itself, trusting the mirror's private CA.
      release: { url: mirror.url, publicKey: mirror.publicKey, version: VERSION, caFile: 'mirror-ca.pem' },
      operators: { cidrs: [`${OPERATOR_ADDRESS}/32`], sshKeys: [operator.publicKey] },
      pools: { app: { role: 'application', capacityBudget: { cpu: 16, memoryMiB: 32768, diskGiB: 400 } } },
      // No hostKey: each seed pinned its host's key in the state.
      nodes: HOSTS.map((h) => ({
        id: h.name,
        pool: 'app',
        state: 'active',
        ssh: { host: addresses[h.name], user: 'ops' },
        maxCapacity: { cpu: 2, memoryMiB: 4096, diskGiB: 40 },
      })),
      canary: HOSTS[0]!.name,
    }
  }

  async function commit(name: string, fleet: Fleet): Promise<string> {
    await writeFile(fleetPath(), stringify(fleet))
    git('add', 'fleet.yaml')
    git('commit', '-q', '-m', name)
    shas[name] = git('rev-parse', 'HEAD')
    return shas[name]
  }

  // Runs use mitogen, fleetkit's default where ansible-mitogen is installed; the host key test runs
  // on plain ssh (OpenSSH's own StrictHostKeyChecking), so both strategies are covered.
  const fleetkit = (args: string[]) => runFleetkit([...args, '--definition', fleetPath()], { env, timeout: 600_000 })
  const withSsh = (args: string[]) =>
    runFleetkit([...args, '--definition', fleetPath()], {
      env: { ...env, FLEETKIT_SYNC_MITOGEN: '0' },
      timeout: 600_000,
    })
  const node = (fleet: Fleet, id: string) => fleet.nodes.find((n) => n.id === id)!
  const byNode = (report: { nodes: { node: string; state: string; code: string | null }[] }) =>
    Object.fromEntries(report.nodes.map((n) => [n.node, n]))

  before(async () => {
    await assertHostsAvailable('container')
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-sync-'))
    repo = join(dir, 'repo')
    await mkdir(repo)
    execFileSync('git', ['init', '-q', repo])
    git('config', 'user.email', 'sync-test@fleet.internal')
    git('config', 'user.name', 'sync test')
    server = await startDisposablePostgres()
    gw = await startTestGateway({
      postgresUrl: server.url,
      mode: 'process',
      serverNames: ['localhost', '127.0.0.1', OPERATOR_ADDRESS],
      env: { FLEETKIT_ENROLL_BIND: '0.0.0.0:0', FLEETKIT_AGENT_BIND: '0.0.0.0:0' },
    })
    db = gw.db
    // The real agent at fleetkit's version (it enrolls and heartbeats); a stand-in 1.1.0 for the canary's agent bump.
    mirror = await startReleaseMirror(join(dir, 'mirror'), [VERSION, '1.1.0'], {
      [VERSION]: await readFile(await agentBundle()),
    })
    operator = await generateOperatorKey(dir)
    await writeFile(join(repo, 'mirror-ca.pem'), mirror.caPem)
    git('add', 'mirror-ca.pem')
    const extraVars = join(dir, 'harness-vars.json')
    // What only a test harness passes: the hosts are containers; the mirror's private CA for agent_update.
    await writeFile(extraVars, JSON.stringify({ ...TEST_HARNESS_VARS, agent_update_ca_pem: mirror.caPem }))
    env = {
      DATABASE_URL: db.url,
      FLEETKIT_STATE_DIR: join(dir, 'state'),
      FLEETKIT_PKI_DIR: gw.pkiDir,
      ANSIBLE_PRIVATE_KEY_FILE: operator.privateKeyFile,
      FLEETKIT_SYNC_EXTRA_VARS_FILE: extraVars,
    }
    // As docs/getting-started.md: the seeds first (each pins its host key in the state, an agent seed
    // also holds a single-use secret), then the hosts boot from them, then their addresses are declared.
    await writeFile(fleetPath(), stringify(baseFleet()))
    const seeds: { userData: string; hostKey: { privateKey: string; publicKey: string } }[] = []
    for (const h of HOSTS) {
      const output = join(dir, `${h.name}.user-data`)
      const seeded = await runFleetkit(
        ['seed', h.name, '--kind', h.seed, '--definition', fleetPath(), '--output', output],
        { env, timeout: 120_000 },
      )
      assert.equal(seeded.code, 0, seeded.stdout + seeded.stderr)
      const userData = await readFile(output, 'utf8')
      const keys = (parse(userData) as { ssh_keys: { ed25519_private: string; ed25519_public: string } }).ssh_keys
      seeds.push({ userData, hostKey: { privateKey: keys.ed25519_private, publicKey: keys.ed25519_public } })
    }
    hosts = await startContainerHosts(HOSTS.length, (i) => ({
      name: HOSTS[i]!.name,
      release: HOSTS[i]!.release,
      operator,
      hostKey: seeds[i]!.hostKey,
      seed: { userData: seeds[i]!.userData },
    }))
    addresses = Object.fromEntries(hosts.map((h) => [h.name, h.address]))
    await commit('A', baseFleet())
  })

  after(async () => {
    for (const h of hosts ?? []) await h.stop()
    await mirror?.close()
    await gw?.close()
    await server?.stop()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  afterEach(async function () {
    if (this.currentTest?.state !== 'failed') return
    // What the agents said: the reason an enrollment or a heartbeat failed is there.
    for (const h of hosts ?? []) {
      const logs = await h.ssh('journalctl -u fleetkit-agent.service -n 20 --no-pager', { timeoutMs: 30_000 })
      process.stderr.write(`--- ${h.name}: fleetkit-agent journal ---\n${logs.stdout}${logs.stderr}\n`)
    }
  })

  it('the journey: sync converges all three (the canary first), enrolls the agents the worker seeds left out, each heartbeats, node admit admits; a second sync changes and issues nothing; drift is clean; drain, undrain, admit again', async () => {
    const [canary, second, third] = hosts.map((h) => h.name) as [string, string, string]
    // Stock Debian 12 and 13, no release switch anywhere; the agent seed enrolled its host at first boot.
    for (const [i, h] of hosts.entries()) {
      const release = HOSTS[i]!.release === 'bookworm' ? '12' : '13'
      assert.match(
        (await h.sshOk('. /etc/os-release; echo "$ID $VERSION_ID"')).stdout,
        new RegExp(`^debian ${release}$`, 'm'),
      )
    }
    assert.equal((await getNode(db.pool, second))?.status, 'active', 'the agent seed enrolled its host at first boot')
    assert.equal((await getNode(db.pool, canary))?.status, 'provisioning', 'a worker seed installs no agent')
    const human = await runFleetkit(['sync', '--definition', fleetPath(), '--ref', shas.A!], { env, timeout: 900_000 })
    assert.equal(human.code, 0, human.stderr + human.stdout)
    assert.match(human.stdout, /strategy mitogen_free \(ansible-mitogen\), forks 3, pipelining on/)
    assert.match(human.stdout, new RegExp(`Canary ${canary} goes first`))
    const lines = human.stdout.split('\n')
    const canaryLine = lines.findIndex((l) => l.startsWith(`${canary} (canary): changed`))
    assert.ok(canaryLine >= 0 && lines.findIndex((l) => l.startsWith(`${second}: changed`)) > canaryLine, human.stdout)
    for (const name of [canary, third])
      assert.match(human.stdout, new RegExp(`${name}: enrollment secret and gateway CA handed over`))
    assert.doesNotMatch(human.stdout, new RegExp(`${second}: enrollment secret`), 'the enrolled agent got a secret')
    const runId = Number(/Run (\d+) \(sync\)/.exec(human.stdout)?.[1])
    const run = await getSyncRun(db.pool, runId)
    assert.equal(run?.outcome, 'converged')
    assert.equal(run?.revision, shas.A)
    const ledger = await listSyncNodes(db.pool, runId)
    assert.deepEqual(
      ledger.map((n) => [n.nodeId, n.phase, n.state]),
      [
        [canary, 'canary', 'changed'],
        [second, 'fleet', 'changed'],
        [third, 'fleet', 'changed'],
      ],
    )
    assert.ok(ledger.every((n) => n.appliedRevision === shas.A && n.agentVersion === VERSION))
    assert.equal((await getCanaryProof(db.pool, 'agentVersion', VERSION))?.nodeId, canary)
    assert.equal((await hosts[2]!.ssh('nft list table inet fleetkit')).code, 0)
    // Each agent enrolled with its secret (the seed's, or the one sync handed over: used up, deleted) and heartbeats.
    const handed = await listEvents(db.pool, { kind: 'sync_enrollment_handed_over' })
    assert.deepEqual(handed.map((e) => e.nodeId).sort(), [canary, third].sort())
    for (const h of hosts) {
      const row = await getNode(db.pool, h.name)
      assert.equal(row?.status, 'active', h.name)
      assert.ok(row?.hostFactsAt && row.hostAgentVersion === VERSION, JSON.stringify(row))
      assert.ok(row.enrollmentSecretUsedAt, `${h.name}: the secret was used`)
      const onHost = await h.sshOk(
        'systemctl is-active fleetkit-agent.service; test -e /var/lib/fleetkit/enrollment-secret && echo secret-left || echo secret-gone; stat -c %U:%a /etc/fleetkit/gateway-ca.pem',
      )
      assert.deepEqual(onHost.stdout.trim().split('\n'), ['active', 'secret-gone', 'root:644'], h.name)
    }
    // --definition records the node's capacity (its maxCapacity) before admitting it.
    const admitted = await runFleetkit(['node', 'admit', canary, '--definition', fleetPath(), '--json'], {
      env,
      timeout: 120_000,
    })
    assert.equal(admitted.code, 0, admitted.stdout + admitted.stderr)
    assert.equal((await getNode(db.pool, canary))?.schedulable, true)

    const again = await fleetkit(['sync', '--ref', shas.A!, '--json'])
    assert.equal(again.code, 0, again.stderr + again.stdout)
    assertMatchesOutputSchema('sync', again.json)
    assert.deepEqual(
      again.json.result.nodes.map((n: { state: string }) => n.state),
      ['converged', 'converged', 'converged'],
      again.stdout,
    )
    // Enrolled and heartbeating: nothing issued, nothing handed over.
    assert.deepEqual(again.json.result.enrolled, [])
    assert.equal((await listEvents(db.pool, { kind: 'sync_enrollment_handed_over' })).length, 2)
    // The fast path: every node's fingerprint is as the first sync recorded it, so no role ran.
    assert.deepEqual(again.json.result.fingerprint.unchanged, [canary, second, third].sort())
    assert.ok(
      again.json.result.nodes.every(
        (n: { message: string; tasks: { ok: number } }) =>
          /^unchanged since run \d+: \d+ managed resources/.test(n.message) && n.tasks.ok === 0,
      ),
      again.stdout,
    )
    assert.match(again.json.result.canary.skippedBecause, new RegExp(`the canary ${canary} is unchanged`))
    // --full runs the roles anyway, and changes nothing.
    const full = await fleetkit(['sync', '--ref', shas.A!, '--limit', third, '--full', '--json'])
    assert.equal(full.code, 0, full.stderr + full.stdout)
    assert.equal(full.json.result.fingerprint.off, '--full')
    const fullNode = full.json.result.nodes.find((n: { node: string }) => n.node === third)
    assert.ok(
      fullNode.state === 'converged' && fullNode.tasks.ok > 20 && fullNode.tasks.changed === 0,
      JSON.stringify(fullNode),
    )
    assert.deepEqual(full.json.result.enrolled, [])
    const drift = await fleetkit(['drift', '--json'])
    assert.equal(drift.code, 0, drift.stdout + drift.stderr)

    // The lifecycle both ways: a drained node comes back with undrain, and is schedulable once admitted again.
    const cli = (args: string[]) => runFleetkit([...args, '--json'], { env, timeout: 120_000 })
    const drained = await cli(['node', 'drain', canary])
    assert.equal(drained.code, 0, drained.stdout + drained.stderr)
    assert.deepEqual(
      [(await getNode(db.pool, canary))?.status, (await getNode(db.pool, canary))?.schedulable],
      ['draining', false],
    )
    const undrained = await cli(['node', 'undrain', canary])
    assert.equal(undrained.code, 0, undrained.stdout + undrained.stderr)
    assert.equal(undrained.json.result.to, 'active')
    assert.equal((await getNode(db.pool, canary))?.schedulable, false, 'undrain does not make it schedulable')
    const readmitted = await cli(['node', 'admit', canary, '--definition', fleetPath()])
    assert.equal(readmitted.code, 0, readmitted.stdout + readmitted.stderr)
    assert.equal((await getNode(db.pool, canary))?.schedulable, true)
  })

  it('drift seen as it happens (issue 39): an nft rule, an sshd setting and a unit changed by hand are marked drifted within a check interval with no command run; undone, cleared; the check costs little', async () => {
    const target = hosts[2]!
    const drift = async () => (await listNodeDrift(db.pool, [target.name]))[0]
    /** The drift check runs every 60 s; the agent reads its result at each heartbeat (every 15 s). */
    const CHECK_INTERVAL_MS = 60_000
    const HEARTBEAT_MS = 15_000
    // A change (or its undoing) takes several commands; a check that runs between them sees it in part, and
    // the next check, an interval later, sees it whole: so two intervals, the heartbeat's, and a margin.
    const SEEN_WITHIN_MS = 2 * CHECK_INTERVAL_MS + 2 * HEARTBEAT_MS + 15_000
    // The last sync (--full above) left its resource list on the host and ran the check once.
    await eventually('the node is in sync', async () => (await drift())?.state === 'in_sync' || undefined, {
      timeoutMs: CHECK_INTERVAL_MS + 2 * HEARTBEAT_MS,
      intervalMs: 1000,
    })
    const changedAt = Date.now()
    await target.sshOk(
      [
        `nft insert rule inet fleetkit input tcp dport 9 accept comment '"drift-test"'`,
        "printf 'LoginGraceTime 77\\n' > /etc/ssh/sshd_config.d/00-drift-test.conf",
        'systemctl stop fleetkit-firewall-snapshot.timer',
      ].join(' && '),
    )
    // Nothing is run on the operator's side: the next check and heartbeat carry it.
    const drifted = await eventually(
      'the gateway marks the node drifted in nft, sshd and unit',
      async () => {
        const d = await drift()
        return d?.state === 'drifted' && d.parts.length >= 3 ? d : undefined
      },
      { timeoutMs: SEEN_WITHIN_MS, intervalMs: 1000 },
    )
    const seenAfterS = Math.round((Date.now() - changedAt) / 1000)
    assert.deepEqual(drifted.parts, ['nft', 'sshd', 'unit'])
    const events = await listEvents(db.pool, { nodeId: target.name })
    const last = events.filter((e) => e.kind === 'node_drifted').at(-1)
    assert.deepEqual(last?.data.parts, ['nft', 'sshd', 'unit'])
    const listed = await runFleetkit(['node', 'list', '--json'], { env, timeout: 120_000 })
    const row = listed.json.result.nodes.find((n: { id: string }) => n.id === target.name)
    assert.deepEqual(row.drift.parts, ['nft', 'sshd', 'unit'])
    const ready = await runFleetkit(['fleet', 'ready', '--definition', fleetPath(), '--json'], {
      env,
      timeout: 120_000,
    })
    const failures = ready.json.data.verdict.nodes.find((n: { nodeId: string }) => n.nodeId === target.name).failures
    assert.ok(
      failures.some(
        (f: { code: string; detail: string }) => f.code === 'DRIFT_DETECTED' && /nft, sshd, unit/.test(f.detail),
      ),
      JSON.stringify(failures),
    )

    // Undone by hand: the node matches its fingerprint again and the drift is cleared.
    await target.sshOk(
      [
        `h=$(nft -a list chain inet fleetkit input | sed -n 's/.*"drift-test".*# handle \\([0-9]*\\)$/\\1/p')`,
        'nft delete rule inet fleetkit input handle "$h"',
        'rm /etc/ssh/sshd_config.d/00-drift-test.conf',
        'systemctl start fleetkit-firewall-snapshot.timer',
      ].join(' && '),
    )
    await eventually('the drift is cleared', async () => (await drift())?.state === 'in_sync' || undefined, {
      timeoutMs: SEEN_WITHIN_MS,
      intervalMs: 1000,
    })
    assert.equal((await listEvents(db.pool, { nodeId: target.name })).at(-1)?.kind, 'node_drift_cleared')

    // What one check costs the host: its own figures (CPU of it and the programs it runs, bytes read), three runs.
    const costs: { cpu_ms: number; read_blocks: number; read_bytes: number; wall_ms: number }[] = []
    for (let i = 0; i < 3; i++) {
      await target.sshOk('systemctl start fleetkit-drift-check.service')
      costs.push(JSON.parse((await target.sshOk('cat /run/fleetkit/fingerprint/state.json')).stdout).cost)
    }
    const resources = JSON.parse((await target.sshOk('cat /etc/fleetkit/fingerprint-resources.json')).stdout).length
    console.log(
      `      drift seen ${seenAfterS} s after the change (check every ${CHECK_INTERVAL_MS / 1000} s, heartbeat every ${HEARTBEAT_MS / 1000} s); one check of ${resources} resources: ${costs
        .map(
          (c) =>
            `${c.cpu_ms} ms CPU, ${c.read_blocks} blocks and ${Math.round(c.read_bytes / 1024)} KiB read, ${c.wall_ms} ms`,
        )
        .join('; ')}`,
    )
    for (const c of costs) assert.ok(c.cpu_ms > 0 && c.wall_ms > 0, JSON.stringify(c))
  })

  it('a dry run prints the plan and its hash and records no applied revision; a stale --plan-hash is refused, the reviewed one applies', async () => {
    const fleet = baseFleet()
    fleet.exposure = { otherListeners: 'warn' }
    const sha = await commit('B', fleet)
    const dry = await fleetkit(['sync', '--ref', sha, '--tags', 'br_netfilter', '--dry-run', '--json'])
    assert.equal(dry.code, 0, dry.stderr + dry.stdout)
    assertMatchesOutputSchema('sync', dry.json)
    assert.equal(dry.json.result.kind, 'dry_run')
    assert.deepEqual(
      dry.json.result.nodes.map((n: { state: string }) => n.state),
      ['converged', 'converged', 'converged'],
    )
    const planHash = dry.json.result.planHash as string
    assert.match(planHash, /^[0-9a-f]{64}$/)
    const human = await runFleetkit(
      ['sync', '--definition', fleetPath(), '--ref', sha, '--tags', 'br_netfilter', '--dry-run'],
      { env, timeout: 600_000 },
    )
    assert.match(human.stdout, /^Ansible: strategy mitogen_free \(ansible-mitogen\), forks 3, pipelining on/m)
    assert.match(
      human.stdout,
      new RegExp(`Plan ${planHash} \\(apply it with: fleetkit sync --ref ${sha} --plan-hash ${planHash}\\)`),
    )
    assert.equal((await lastApplied())?.revision, shas.A, 'a dry run applies nothing')

    const stale = await fleetkit([
      'sync',
      '--ref',
      sha,
      '--tags',
      'br_netfilter',
      '--limit',
      `${hosts[0]!.name},${hosts[1]!.name}`,
      '--plan-hash',
      planHash,
      '--json',
    ])
    assert.equal(stale.code, 24, stale.stdout)
    assert.equal(stale.json.code, 'SYNC_PLAN_STALE')
    const badRef = await fleetkit(['sync', '--ref', 'main', '--json'])
    assert.equal(badRef.code, 2)
    assert.equal(badRef.json.code, 'SYNC_REF_INVALID')

    const applied = await fleetkit(['sync', '--ref', sha, '--tags', 'br_netfilter', '--plan-hash', planHash, '--json'])
    assert.equal(applied.code, 0, applied.stdout + applied.stderr)
    assert.equal(applied.json.result.planHash, planHash)
  })

  it("drift reports the firewall's nft table deleted by hand on one host, naming the node and the role, and nothing on the others; the next sync repairs it", async () => {
    const target = hosts[1]!
    await target.sshOk('nft delete table inet fleetkit')
    // Without --ref: the revision the last complete sync applied (A), not the file on disk (B).
    const drift = await fleetkit(['drift', '--tags', 'firewall', '--json'])
    assert.equal(drift.code, 1, drift.stdout + drift.stderr)
    assert.equal(drift.json.data.report.revision, shas.A)
    assertMatchesOutputSchema('drift', drift.json)
    assert.equal(drift.json.code, 'DRIFT_DETECTED')
    const nodes = byNode(drift.json.data.report)
    assert.equal(nodes[target.name]?.state, 'changed')
    assert.ok(
      Object.keys((nodes[target.name] as unknown as { changes: object }).changes).includes('firewall'),
      JSON.stringify(nodes[target.name]),
    )
    assert.equal(nodes[hosts[0]!.name]?.state, 'converged')
    assert.equal(nodes[hosts[2]!.name]?.state, 'converged')
    const table = await runFleetkit(['drift', '--definition', fleetPath(), '--ref', shas.A!, '--tags', 'firewall'], {
      env,
      timeout: 600_000,
    })
    assert.equal(table.code, 1)
    assert.match(table.stdout, new RegExp(`${target.name}\\s+firewall\\s+\\d+ task\\(s\\) would change`))
    assert.match(table.stdout, new RegExp(`${hosts[0]!.name}\\s+-\\s+no drift`))

    // sync sees the same change through the fingerprint: that node runs in full and is repaired, the others are skipped.
    const repaired = await fleetkit(['sync', '--ref', shas.A!, '--json'])
    assert.equal(repaired.code, 0, repaired.stderr + repaired.stdout)
    assert.deepEqual(repaired.json.result.fingerprint.unchanged, [hosts[0]!.name, hosts[2]!.name].sort())
    assert.deepEqual(repaired.json.result.fingerprint.drifted, [{ node: target.name, differs: ['nft:inet fleetkit'] }])
    assert.equal(byNode(repaired.json.result)[target.name]?.state, 'changed')
    assert.match((await target.ssh('nft list chain inet fleetkit input')).stdout, /iif "lo" accept/)
    assert.deepEqual(repaired.json.result.fingerprint.recorded, [target.name])
  })

  it('validate --since applied refuses an agent bump before the canary proved it, and accepts it after', async () => {
    const canary = hosts[0]!.name
    const pinned = baseFleet()
    node(pinned, canary).agentVersion = '1.1.0'
    const bumped = baseFleet()
    bumped.release.version = '1.1.0'
    // The bump is an uncommitted edit of fleet.yaml: --since reads the same path at the applied revision (A).
    await writeFile(fleetPath(), stringify(bumped))
    const refused = await runFleetkit(['validate', '--definition', fleetPath(), '--since', 'applied'], {
      env,
      timeout: 120_000,
    })
    assert.notEqual(refused.code, 0, refused.stdout)
    assert.match(refused.stdout + refused.stderr, /TRANSITION_UNPROVEN/)

    const sha = await commit('C', pinned)
    const synced = await fleetkit(['sync', '--ref', sha, '--tags', 'agent_update', '--json'])
    assert.equal(synced.code, 0, synced.stdout + synced.stderr)
    assert.equal(synced.json.result.canary.ran, canary)
    assert.deepEqual(
      synced.json.result.proofs.find((p: { kind: string }) => p.kind === 'agentVersion'),
      { kind: 'agentVersion', value: '1.1.0', node: canary, recorded: true },
    )

    await writeFile(fleetPath(), stringify(bumped))
    const accepted = await runFleetkit(['validate', '--definition', fleetPath(), '--since', 'applied'], {
      env,
      timeout: 120_000,
    })
    assert.equal(accepted.code, 0, accepted.stdout + accepted.stderr)
    // The canary run applied one role (--tags), so the applied revision is still A; the proof is what changed.
    assert.match(accepted.stdout, new RegExp(`Applied revision: ${shas.A}`))
    git('checkout', '--', 'fleet.yaml')
  })

  it('a host that presents another host key stops that node with SSH_HOST_KEY_MISMATCH and no other', async () => {
    const victim = hosts[2]!
    // The host's key is replaced (an impostor, or a reinstall nobody re-seeded); the pinned one is kept aside.
    const impostor = (
      await victim.sshOk(
        [
          'cd /etc/ssh && cp -a ssh_host_ed25519_key /root/pinned_key && cp -a ssh_host_ed25519_key.pub /root/pinned_key.pub',
          "rm -f /root/impostor /root/impostor.pub && ssh-keygen -q -t ed25519 -N '' -f /root/impostor",
          'install -m 600 /root/impostor ssh_host_ed25519_key && install -m 644 /root/impostor.pub ssh_host_ed25519_key.pub',
          'systemctl reload ssh && cat /root/impostor.pub',
        ].join(' && '),
      )
    ).stdout.trim()
    try {
      // sshd re-executes after the reload: wait until it serves the new key.
      const blob = impostor.split(' ')[1]!
      await eventually(
        'the host serving the replaced key',
        async () =>
          (await runProcess('ssh-keyscan', ['-t', 'ed25519', victim.address])).stdout.includes(blob) ? true : undefined,
        { timeoutMs: 30_000, intervalMs: 500 },
      )
      // Revision C (the canary pinned to the agent it proved): the definition is unchanged, the host is not.
      const run = await withSsh(['sync', '--ref', shas.C!, '--tags', 'br_netfilter', '--json'])
      assert.equal(run.code, 21, run.stdout + run.stderr)
      assertMatchesOutputSchema('sync', run.json)
      assert.equal(run.json.code, 'SYNC_PARTIAL_FAILURE')
      const nodes = byNode(run.json.data.report)
      assert.equal(nodes[victim.name]?.state, 'failed')
      assert.equal(nodes[victim.name]?.code, 'SSH_HOST_KEY_MISMATCH')
      assert.equal(nodes[hosts[0]!.name]?.state, 'converged')
      assert.equal(nodes[hosts[1]!.name]?.state, 'converged')
    } finally {
      // The pinned key back, over a connection that trusts the impostor's key for this once.
      const knownHosts = join(dir, 'impostor_known_hosts')
      await writeFile(knownHosts, `${victim.address} ${impostor.split(' ').slice(0, 2).join(' ')}\n`)
      const restore =
        'cd /etc/ssh && install -m 600 /root/pinned_key ssh_host_ed25519_key && install -m 644 /root/pinned_key.pub ssh_host_ed25519_key.pub && systemctl reload ssh'
      const back = await runProcess(
        'ssh',
        [...sshOptions(victim, knownHosts), `root@${victim.address}`, '--', restore],
        {
          timeoutMs: 60_000,
        },
      )
      assert.equal(back.code, 0, back.stderr)
      // sshd re-executes after the reload: the pinned key answers again once it listens.
      await eventually(
        'the pinned host key served again',
        async () => ((await victim.ssh('true')).code === 0 ? true : undefined),
        {
          timeoutMs: 30_000,
          intervalMs: 500,
        },
      )
    }
  })

  it('an unreachable canary hands its role to the next reachable node of its pool, and says so', async () => {
    const fleet = baseFleet()
    node(fleet, hosts[0]!.name).ssh = { host: '10.231.254.254', user: 'ops' }
    const sha = await commit('F', fleet)
    const run = await fleetkit(['sync', '--ref', sha, '--tags', 'br_netfilter', '--json'])
    assert.equal(run.code, 22, run.stdout + run.stderr)
    assert.equal(run.json.code, 'SYNC_NODES_UNREACHABLE')
    const report = run.json.data.report
    assert.equal(report.canary.ran, hosts[1]!.name)
    assert.match(
      report.canary.notes.join('\n'),
      new RegExp(
        `Canary ${hosts[0]!.name} is unreachable \\(offline\\): ${hosts[1]!.name}, the next reachable node of pool app, takes the canary role`,
      ),
    )
    const nodes = byNode(report)
    assert.equal(nodes[hosts[0]!.name]?.state, 'unreachable')
    assert.equal(nodes[hosts[1]!.name]?.state, 'converged')
    assert.equal(nodes[hosts[2]!.name]?.state, 'converged')
    assert.deepEqual(
      report.nodes
        .filter((n: { phase: string }) => n.phase === 'canary')
        .map((n: { node: string }) => n.node)
        .sort(),
      [hosts[0]!.name, hosts[1]!.name],
    )
  })

  it('a failing canary leaves every other node not_attempted', async () => {
    const fleet = baseFleet()
    node(fleet, hosts[0]!.name).dataVolume = {
      device: '/dev/fleetkit-missing',
      filesystem: 'xfs',
      mountPoint: '/srv/data',
    }
    const sha = await commit('G', fleet)
    const run = await fleetkit(['sync', '--ref', sha, '--tags', 'data_volume', '--json'])
    assert.equal(run.code, 20, run.stdout + run.stderr)
    assertMatchesOutputSchema('sync', run.json)
    assert.equal(run.json.code, 'SYNC_CANARY_FAILED')
    const nodes = byNode(run.json.data.report)
    assert.equal(nodes[hosts[0]!.name]?.state, 'failed')
    assert.equal(nodes[hosts[0]!.name]?.code, 'DATA_VOLUME_DEVICE_MISSING')
    assert.equal(nodes[hosts[1]!.name]?.state, 'not_attempted')
    assert.equal(nodes[hosts[2]!.name]?.state, 'not_attempted')
    const runDir = join(env.FLEETKIT_STATE_DIR!, 'sync', `run-${run.json.data.report.runId}`)
    assert.ok(!existsSync(join(runDir, 'events-fleet-1.jsonl')), 'no fleet phase ran')
  })

  it('a second sync gets SYNC_IN_PROGRESS; SIGKILL mid-run, then --resume finishes without re-running converged nodes', async () => {
    const fleet = baseFleet()
    fleet.exposure = { otherListeners: 'fail' }
    const sha = await commit('H', fleet)
    const first = startProcess(
      process.execPath,
      [fleetkitEntry(), 'sync', '--definition', fleetPath(), '--ref', sha, '--tags', 'br_netfilter'],
      { env: overlayEnv(env) },
    )
    try {
      // Wait until the canary converged and the fleet phase runs.
      const runId = await eventually(
        'the fleet phase of the first sync',
        async () => {
          const m = /Run|Canary/.test(first.stdout()) ? await latestRunning() : undefined
          if (!m) return undefined
          const nodes = await listSyncNodes(db.pool, m)
          return nodes.some((n) => n.phase === 'fleet' && n.state === 'running') ? m : undefined
        },
        {
          timeoutMs: 300_000,
          intervalMs: 100,
          stop: () =>
            first.exit()
              ? `the first sync exited (${first.exit()?.code}): ${first.stdout()}${first.stderr()}`
              : undefined,
        },
      )

      const second = await fleetkit(['sync', '--ref', sha, '--tags', 'br_netfilter', '--json'])
      assert.equal(second.code, 23, second.stdout)
      assert.equal(second.json.code, 'SYNC_IN_PROGRESS')
      assert.match(second.json.message, new RegExp(`run ${runId}, started by .* \\(pid ${first.pid}\\)`))

      first.child.kill('SIGKILL')
      await first.exited
      const cut = await getSyncRun(db.pool, runId)
      assert.equal(cut?.status, 'running')
      const canaryBefore = (await listSyncNodes(db.pool, runId)).find((n) => n.phase === 'canary')!
      assert.equal(canaryBefore.state, 'converged')

      const resumed = await fleetkit([
        'sync',
        '--ref',
        sha,
        '--tags',
        'br_netfilter',
        '--resume',
        String(runId),
        '--json',
      ])
      assert.equal(resumed.code, 0, resumed.stdout + resumed.stderr)
      assertMatchesOutputSchema('sync', resumed.json)
      assert.equal(resumed.json.result.runId, runId)
      assert.equal(resumed.json.result.resumed, true)
      assert.match(resumed.json.result.canary.skippedBecause, /already converged in this run/)
      const after = await listSyncNodes(db.pool, runId)
      assert.deepEqual(
        after.map((n) => n.state).filter((s) => s !== 'changed' && s !== 'converged'),
        [],
      )
      const runDir = join(env.FLEETKIT_STATE_DIR!, 'sync', `run-${runId}`)
      assert.ok(existsSync(join(runDir, 'events-fleet-2.jsonl')), 'the resume ran the fleet phase')
      assert.ok(!existsSync(join(runDir, 'events-canary-2.jsonl')), 'the resume did not run the converged canary again')
      assert.equal((await getSyncRun(db.pool, runId))?.attempts, 2)
    } finally {
      await first.stop('SIGKILL', 1000)
    }
  })

  async function lastApplied() {
    const { lastAppliedRevision } = await import('../../../src/store/sync/sync-ledger.js')
    return lastAppliedRevision(db.pool)
  }

  async function latestRunning(): Promise<number | undefined> {
    const { listUnfinishedSyncRuns } = await import('../../../src/store/sync/sync-ledger.js')
    return (await listUnfinishedSyncRuns(db.pool))[0]?.id
  }
})
