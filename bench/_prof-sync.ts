// scratch: not committed
import { spawnSync, execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { stringify } from 'yaml'
import { fleetkitEntry } from '../test/support/cli.js'
import { OPERATOR_ADDRESS, startContainerHosts } from '../test/hosts/index.js'
import { startReleaseMirror } from '../test/integration/roles/release-mirror.js'
import { startBenchPostgres } from './gateway/postgres.js'
import { ansibleEnv, speedSettings } from '../src/sync/ansible-phase.js'
import { packagePath } from '../src/package-root.js'
import { spawn } from 'node:child_process'

const USER_DATA = `#cloud-config
users:
  - name: ops
    shell: /bin/bash
    sudo: "ALL=(ALL) NOPASSWD:ALL"
runcmd:
  - [sh, -c, "install -d -m 700 -o ops -g ops /home/ops/.ssh && install -m 600 -o ops -g ops /root/.ssh/authorized_keys /home/ops/.ssh/authorized_keys"]
`
const n = Number(process.env.N ?? 1)
const work = await mkdtemp(join(tmpdir(), 'fk-prof-'))
const pg = await startBenchPostgres()
const mirror = await startReleaseMirror(join(work, 'mirror'), ['1.0.0'])
const extraVars = join(work, 'harness-vars.json')
await writeFile(extraVars, JSON.stringify({ preflight_allow_container: true, preflight_allow_test_releases: true, agent_update_ca_pem: mirror.caPem }))
const hosts = await startContainerHosts(n, (i) => ({ name: `pf-${i + 1}`, seed: { userData: USER_DATA } }))
const dir = join(work, 'fk'); await mkdir(dir)
const def = join(dir, 'fleet.yaml')
await writeFile(def, stringify({
  version: 1, fleet: 'bench',
  gateway: { url: 'https://gateway.fleet.internal:8443', enrollUrl: 'https://enroll.fleet.internal:8444' },
  release: { url: mirror.url, publicKey: mirror.publicKey, version: '1.0.0' },
  operators: { cidrs: [`${OPERATOR_ADDRESS}/32`], sshKeys: [hosts[0]!.operator.publicKey] },
  pools: { app: { role: 'application', capacityBudget: { cpu: 200, memoryMiB: 409600, diskGiB: 4000 } } },
  nodes: hosts.map((h) => ({ id: h.name, pool: 'app', state: 'active', ssh: { host: h.address, user: 'ops' }, hostKey: h.hostPublicKey, maxCapacity: { cpu: 2, memoryMiB: 4096, diskGiB: 40 } })),
  canary: hosts[0]!.name,
}))
const env = { ...process.env, DATABASE_URL: pg.url, FLEETKIT_STATE_DIR: join(dir, 'state'), ANSIBLE_PRIVATE_KEY_FILE: hosts[0]!.operator.privateKeyFile, FLEETKIT_SYNC_EXTRA_VARS_FILE: extraVars }
function run(cmd: string, args: string[], e: NodeJS.ProcessEnv): Promise<{ ms: number; out: string }> {
  const t = performance.now()
  return new Promise((res) => { const c = spawn(cmd, args, { env: e, cwd: dir }); let out = ''; c.stdout.on('data', (d) => { out += d }); c.stderr.on('data', (d) => { out += d }); c.on('close', () => res({ ms: performance.now() - t, out })) })
}
let r = await run(process.execPath, [fleetkitEntry(), 'sync', '--definition', def], env)
console.log('first sync', r.ms.toFixed(0), r.out.split('\n').slice(-8).join('\n'))
r = await run(process.execPath, [fleetkitEntry(), 'sync', '--definition', def], env)
console.log('second sync', r.ms.toFixed(0), r.out.split('\n').slice(-8).join('\n'))
execFileSync(process.execPath, [fleetkitEntry(), 'inventory', '--definition', def, '--output', join(dir, 'inventory.yml')], { env, stdio: 'ignore' })
await mkdir(join(dir, 'w'), { recursive: true })
const speed = speedSettings({ targets: n, noMitogen: process.env.NOMITO === '1', env, stateDir: join(dir, 'state') })
const aenv = { ...ansibleEnv({ env, speed, workDir: join(dir, 'w'), eventsFile: join(dir, 'ev.jsonl') }), ANSIBLE_CALLBACKS_ENABLED: 'profile_tasks', ANSIBLE_STDOUT_CALLBACK: process.env.CB ?? 'default' }
for (let i = 0; i < Number(process.env.REPS ?? 1); i++) {
  r = await run('ansible-playbook', ['-i', join(dir, 'inventory.yml'), packagePath('ansible', 'playbooks', 'site.yml'), '-e', `@${extraVars}`], aenv)
  console.log('direct ansible', r.ms.toFixed(0)); console.log(r.out.split('\n').filter((l) => /\s\d+\.\d+s$|PLAY RECAP|ok=/.test(l)).join('\n'))
}
if (process.env.KEEP !== '1') { await Promise.all(hosts.map((h) => h.stop())); await mirror.close(); await pg.stop() }
else { console.log('KEEP: dir', dir); await writeFile('/tmp/prof-env.sh', `export DATABASE_URL='${pg.url}' FLEETKIT_STATE_DIR='${join(dir, 'state')}' ANSIBLE_PRIVATE_KEY_FILE='${hosts[0]!.operator.privateKeyFile}' FLEETKIT_SYNC_EXTRA_VARS_FILE='${extraVars}' DEF='${def}'\n`); await new Promise(() => {}) }
