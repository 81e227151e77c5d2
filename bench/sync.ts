// Sync benchmark: site.yml over N container hosts with `fleetkit sync` and with plain
// `ansible-playbook` (Ansible's own defaults: no ansible.cfg, no pipelining, forks 5, the linear
// strategy) on the same rendered inventory; the first run on fresh hosts and the second (no-change)
// run; prints both and the ratio. The target: fleetkit at least 3x faster on the no-change run.
// fleetkit's no-change run is measured three times: as an operator gets it (the fingerprint fast path,
// src/sync/fingerprint.ts, its probe over node-ssh), with the probe the way it was before node-ssh
// (one ansible-playbook over fingerprint.yml: FLEETKIT_SYNC_FINGERPRINT_VIA=ansible), printed with
// their ratio, and with --full (every role on every node, Ansible's own work). sync enrolls each host
// and waits for its heartbeat, so a real gateway runs here and the mirror serves the real agent.
//
//   npx tsx bench/sync.ts [--hosts 1,5,10] [--no-mitogen] [--first-only [--repeat K] [--only fleetkit]] [--profile DIR] [--local-cloud]
//
// --first-only is the fleet-scale first converge (issue 24): per size, fleetkit's first run on fresh
// hosts and its no-change fast path, then plain ansible-playbook's first run on fresh hosts; the slow
// no-change runs (--full, the probe over ansible-playbook, plain Ansible's second run) are left out.
// --repeat K runs K rounds, alternating which side goes first, with the load average beside each run,
// and prints the median ratio: on a shared machine one pair alone measures the neighbours as much as Ansible.
// --profile DIR writes plain Ansible's output with profile_tasks and profile_roles to DIR (where its time goes).
// --local-cloud takes the hosts from the local cloud (`fleetkit provider stub --boot`'s machines, bench/local-cloud-hosts.ts):
// each a server created through the stub's API and reached at the address it reports, deleted through it after.
//
// Needs root and the test-host packages (bash scripts/install-test-deps). It borrows the test
// suites' container hosts and release mirror (test/hosts, test/integration/roles): the only way to
// get real hosts on one machine. A disposable PostgreSQL holds the ledger. docs/performance.md records the figures.
import { execFileSync, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'

import { stringify } from 'yaml'

import { packagePath } from '../src/package-root.js'
import { agentBundle } from '../test/support/agent-bundle.js'
import { fleetkitEntry } from '../test/support/cli.js'
import { startTestGateway } from '../test/support/gateway.js'
import { OPERATOR_ADDRESS, startContainerHosts } from '../test/hosts/index.js'
import { startReleaseMirror } from '../test/integration/roles/release-mirror.js'
import { startBenchPostgres } from './gateway/postgres.js'
import { type BenchHost, startLocalCloudHosts } from './local-cloud-hosts.js'

const USER_DATA = `#cloud-config
users:
  - name: ops
    shell: /bin/bash
    sudo: "ALL=(ALL) NOPASSWD:ALL"
runcmd:
  - [sh, -c, "install -d -m 700 -o ops -g ops /home/ops/.ssh && install -m 600 -o ops -g ops /root/.ssh/authorized_keys /home/ops/.ssh/authorized_keys"]
`

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback
}
const sizes = option('hosts', '1,5,10').split(',').map(Number)
if (sizes.some((n) => !Number.isInteger(n) || n < 1 || n > 50))
  throw new Error('--hosts takes whole numbers from 1 to 50, comma-separated')
const noMitogen = process.argv.includes('--no-mitogen')
const firstOnly = process.argv.includes('--first-only')
const profileDir = option('profile', '')
const repeat = Number(option('repeat', '1'))
// --only fleetkit: fleetkit's side alone (trying a setting against the plain Ansible figures already printed).
const fleetkitOnly = option('only', '') === 'fleetkit'
if (!Number.isInteger(repeat) || repeat < 1 || repeat > 10)
  throw new Error('--repeat takes a whole number from 1 to 10')
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

const work = await mkdtemp(join(tmpdir(), 'fleetkit-bench-sync-'))
const localCloud = process.argv.includes('--local-cloud') ? await startLocalCloudHosts(work, USER_DATA) : undefined
/** Where ssh and the hosts' gateway traffic come from: the test bridge's operator address, or the local cloud's. */
const operatorAddress = localCloud?.operatorAddress ?? OPERATOR_ADDRESS
const pg = await startBenchPostgres()
const VERSION = (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version
// The hosts reach the gateway on the bridge; the mirror serves the real agent, which enrolls and heartbeats.
const gw = await startTestGateway({
  postgresUrl: pg.url,
  mode: 'process',
  serverNames: ['localhost', '127.0.0.1', operatorAddress],
  env: { FLEETKIT_ENROLL_BIND: '0.0.0.0:0', FLEETKIT_AGENT_BIND: '0.0.0.0:0' },
})
const mirror = await startReleaseMirror(join(work, 'mirror'), [VERSION], {
  [VERSION]: await readFile(await agentBundle()),
})
const extraVars = join(work, 'harness-vars.json')
await writeFile(
  extraVars,
  JSON.stringify({
    preflight_allow_container: true,
    agent_update_ca_pem: mirror.caPem,
  }),
)
let counter = 0

async function fleetFor(hosts: BenchHost[], dir: string): Promise<string> {
  await mkdir(dir, { recursive: true })
  const path = join(dir, 'fleet.yaml')
  await writeFile(
    path,
    stringify({
      version: 1,
      fleet: 'bench',
      gateway: {
        url: `https://${operatorAddress}:${new URL(gw.agentUrl).port}`,
        enrollUrl: `https://${operatorAddress}:${new URL(gw.enrollUrl).port}`,
      },
      release: { url: mirror.url, publicKey: mirror.publicKey, version: VERSION },
      operators: { cidrs: [`${operatorAddress}/32`], sshKeys: [hosts[0]!.operator.publicKey] },
      pools: { app: { role: 'application', capacityBudget: { cpu: 200, memoryMiB: 409600, diskGiB: 4000 } } },
      nodes: hosts.map((h) => ({
        id: h.name,
        pool: 'app',
        state: 'active',
        ssh: { host: h.address, user: 'ops' },
        hostKey: h.hostPublicKey,
        maxCapacity: { cpu: 2, memoryMiB: 4096, diskGiB: 40 },
      })),
      canary: hosts[0]!.name,
    }),
  )
  return path
}

// Asynchronous on purpose: the release mirror the hosts download from is served by this process.
function timed(
  label: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  keep?: string,
): Promise<number> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    let whole = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000)
      if (keep) whole += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000)
    })
    child.once('error', reject)
    child.once('close', (code) => {
      const ms = performance.now() - started
      if (keep) void writeFile(keep, whole).catch(() => undefined)
      if (code === 0) resolve(ms)
      else reject(new Error(`${label} exited ${code}:\n${output.split('\n').slice(-30).join('\n')}`))
    })
  })
}

async function startHosts(n: number): Promise<BenchHost[]> {
  const batch = ++counter
  if (localCloud) return localCloud.start(Array.from({ length: n }, (_, i) => `bs${batch}-${i + 1}`))
  return startContainerHosts(n, (i) => ({ name: `bs${batch}-${i + 1}`, seed: { userData: USER_DATA } }))
}

function fleetkitSync(
  definition: string,
  dir: string,
  hosts: BenchHost[],
  extra: string[] = [],
  extraEnv: NodeJS.ProcessEnv = {},
  keep?: string,
): Promise<number> {
  const env = {
    ...process.env,
    ...extraEnv,
    DATABASE_URL: gw.db.url,
    FLEETKIT_PKI_DIR: gw.pkiDir,
    FLEETKIT_STATE_DIR: join(dir, 'state'),
    ANSIBLE_PRIVATE_KEY_FILE: hosts[0]!.operator.privateKeyFile,
    FLEETKIT_SYNC_EXTRA_VARS_FILE: extraVars,
    ...(noMitogen ? { FLEETKIT_SYNC_MITOGEN: '0' } : {}),
  }
  return timed(
    'fleetkit sync',
    process.execPath,
    [fleetkitEntry(), 'sync', '--definition', definition, ...extra],
    env,
    dir,
    keep,
  )
}

function plainAnsible(dir: string, hosts: BenchHost[], profileAs?: string): Promise<number> {
  // The inventory fleetkit renders (its first run wrote it); Ansible's defaults otherwise.
  const inventory = join(dir, 'inventory.yml')
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LANG: 'C.UTF-8',
    ANSIBLE_ROLES_PATH: packagePath('ansible', 'roles'),
    ANSIBLE_PRIVATE_KEY_FILE: hosts[0]!.operator.privateKeyFile,
    ANSIBLE_NOCOLOR: '1',
    ...(profileAs
      ? { ANSIBLE_CALLBACKS_ENABLED: 'profile_tasks,profile_roles', PROFILE_TASKS_TASK_OUTPUT_LIMIT: '40' }
      : {}),
  }
  return timed(
    'ansible-playbook',
    'ansible-playbook',
    // The rendered inventory also lists the nodes the state still holds from the fleetkit runs (their hosts are gone).
    [
      '-i',
      inventory,
      packagePath('ansible', 'playbooks', 'site.yml'),
      '-e',
      `@${extraVars}`,
      '--limit',
      hosts.map((h) => h.name).join(','),
    ],
    env,
    dir,
    profileAs,
  )
}

async function renderInventory(definition: string, dir: string): Promise<void> {
  const env = { ...process.env, DATABASE_URL: gw.db.url, FLEETKIT_STATE_DIR: join(dir, 'state') }
  execFileSync(
    process.execPath,
    [fleetkitEntry(), 'inventory', '--definition', definition, '--output', join(dir, 'inventory.yml')],
    { env, stdio: 'ignore' },
  )
}

function parkNode(node: string, dir: string): void {
  const env = { ...process.env, DATABASE_URL: gw.db.url, FLEETKIT_STATE_DIR: join(dir, 'state') }
  execFileSync(process.execPath, [fleetkitEntry(), 'node', 'park', node], { env, stdio: 'ignore' })
}

const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')

/**
 * One round of the fleet-scale first converge: fleetkit's first run and its no-change fast path on N fresh
 * hosts, plain ansible-playbook's first run on N other fresh hosts; the load average beside each run.
 */
async function firstConvergeRound(
  n: number,
  round: number,
  plainFirst: boolean,
): Promise<{ ratio: number; row: string }> {
  if (profileDir) await mkdir(profileDir, { recursive: true })
  const keep = (side: string) => (profileDir ? join(profileDir, `${side}-first-${n}-r${round}.txt`) : undefined)
  const fleetkitSide = async () => {
    const hosts = await startHosts(n)
    const dir = join(work, `fleetkit-${n}-r${round}`)
    const definition = await fleetFor(hosts, dir)
    const before = load()
    const first = await fleetkitSync(definition, dir, hosts, [], {}, keep('fleetkit'))
    const after = load()
    const fast = await fleetkitSync(definition, dir, hosts)
    await Promise.all(hosts.map((h) => h.stop()))
    // The state is shared by the rounds: parked, these nodes (their hosts gone) are no later round's targets.
    for (const h of hosts) parkNode(h.name, dir)
    return { first, fast, before, after }
  }
  const plainSide = async () => {
    const hosts = await startHosts(n)
    const dir = join(work, `plain-${n}-r${round}`)
    await fleetFor(hosts, dir).then((definition) => renderInventory(definition, dir))
    const before = load()
    const first = await plainAnsible(dir, hosts, keep('plain'))
    const after = load()
    await Promise.all(hosts.map((h) => h.stop()))
    return { first, before, after }
  }
  let fk, pl
  if (fleetkitOnly) {
    fk = await fleetkitSide()
    const row = `${n} host(s), round ${round}: first run fleetkit ${seconds(fk.first)} (load ${fk.before} -> ${fk.after}); fast path ${seconds(fk.fast)}`
    console.log(row)
    return { ratio: NaN, row }
  }
  if (plainFirst) {
    pl = await plainSide()
    fk = await fleetkitSide()
  } else {
    fk = await fleetkitSide()
    pl = await plainSide()
  }
  const ratio = pl.first / fk.first
  const row =
    `${n} host(s), round ${round} (${plainFirst ? 'plain Ansible' : 'fleetkit'} first): first run fleetkit ${seconds(fk.first)} ` +
    `(load ${fk.before} -> ${fk.after}) vs ansible-playbook ${seconds(pl.first)} (load ${pl.before} -> ${pl.after}): ${ratio.toFixed(2)}x; ` +
    `fleetkit's no-change run (fast path) ${seconds(fk.fast)}, ${(pl.first / fk.fast).toFixed(1)}x under plain Ansible's first run ` +
    `(plain Ansible's no-change run is not timed with --first-only)`
  console.log(row)
  return { ratio, row }
}

const rows: string[] = []
try {
  console.log(
    `load average before: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}; mitogen ${noMitogen ? 'off' : 'on when installed'}`,
  )
  for (const n of sizes) {
    if (firstOnly) {
      const ratios: number[] = []
      for (let round = 1; round <= repeat; round++) {
        // Alternate which side goes first: the machine's other load then falls on both.
        const r = await firstConvergeRound(n, round, round % 2 === 0)
        ratios.push(r.ratio)
        rows.push(r.row)
      }
      if (repeat > 1) {
        const sorted = [...ratios].sort((x, y) => x - y)
        const mid = sorted.length / 2
        const median = sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2
        console.log(
          `${n} host(s): first run, median ratio over ${repeat} rounds ${median.toFixed(2)}x (${ratios.map((x) => x.toFixed(2)).join(', ')})`,
        )
      }
      continue
    }
    // fleetkit: first run on fresh hosts, then the no-change run.
    const a = await startHosts(n)
    const dirA = join(work, `fleetkit-${n}`)
    const defA = await fleetFor(a, dirA)
    const fkFirst = await fleetkitSync(defA, dirA, a)
    const fkSecond = await fleetkitSync(defA, dirA, a)
    // The same no-change run with the probe as it was before node-ssh: the fast path's before and after.
    const fkSecondAnsible = await fleetkitSync(defA, dirA, a, [], { FLEETKIT_SYNC_FINGERPRINT_VIA: 'ansible' })
    const fkFull = await fleetkitSync(defA, dirA, a, ['--full'])
    await Promise.all(a.map((h) => h.stop()))
    // plain ansible-playbook: fresh hosts again, the same inventory fleetkit renders.
    const b = await startHosts(n)
    const dirB = join(work, `plain-${n}`)
    const defB = await fleetFor(b, dirB)
    await renderInventory(defB, dirB)
    const plFirst = await plainAnsible(dirB, b)
    const plSecond = await plainAnsible(dirB, b)
    await Promise.all(b.map((h) => h.stop()))
    const row =
      `${n} host(s): first run fleetkit ${seconds(fkFirst)} vs ansible-playbook ${seconds(plFirst)} (${(plFirst / fkFirst).toFixed(2)}x); ` +
      `no-change run fleetkit ${seconds(fkSecond)} vs ansible-playbook ${seconds(plSecond)} (${(plSecond / fkSecond).toFixed(2)}x); ` +
      `no-change run fleetkit --full ${seconds(fkFull)} (${(plSecond / fkFull).toFixed(2)}x); ` +
      `fast path: probe over ansible-playbook ${seconds(fkSecondAnsible)} (before) vs node-ssh ${seconds(fkSecond)} (after), ${(fkSecondAnsible / fkSecond).toFixed(2)}x`
    console.log(row)
    rows.push(row)
  }
  console.log(
    `load average after: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  )
} finally {
  await mirror.close()
  await gw.close()
  await localCloud?.close()
  await pg.stop()
  await rm(work, { recursive: true, force: true })
}
