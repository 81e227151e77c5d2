// A fleet on the local cloud (`fleetkit provider stub --boot`), as an operator would run it against Hetzner
// Cloud: `node provision` creates each node's server through the stub's API, the server boots as a
// systemd-nspawn machine from Debian 12 with fleetkit's agent seed as user_data, its agent enrolls with a
// real gateway bound on the stub's bridge, `fleetkit sync` converges both nodes at the addresses the API
// reported (no ssh.host in fleet.yaml, and no extra vars: preflight accepts the machines by the local cloud's
// mark, the data volume is mounted by its device path where no udev runs), `node admit` admits one; `node replace` brings up a successor and the
// old server's machine is stopped and deleted exactly once. Nothing is left running.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { stringify } from 'yaml'

import { packagePath } from '../../../src/package-root.js'
import { type HetznerStub, startHetznerStub } from '../../../src/provider/hetzner-stub.js'
import { eventually } from '../../support/eventually.js'
import { LocalCloud, machineNameOf } from '../../../src/provider/local-cloud/local-cloud.js'
import { getNode } from '../../../src/store/nodes/nodes.js'
import { assertHostsAvailable, goldenImage, type OperatorKey } from '../../hosts/index.js'
import { generateOperatorKey } from '../../hosts/keys.js'
import { agentBundle } from '../../support/agent-bundle.js'
import { runFleetkit } from '../../support/cli.js'
import { runProcess } from '../../support/process.js'
import { type TestGateway, startTestGateway } from '../../support/gateway.js'
import { type DisposablePostgres, startDisposablePostgres } from '../../support/postgres.js'
import { type ReleaseMirror, startReleaseMirror } from '../roles/release-mirror.js'

const VERSION = (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version
const BRIDGE = `fklf${process.pid.toString(36)}`.slice(0, 15)
const BRIDGE_ADDRESS = '10.234.0.1'

describe('a fleet on the local cloud: provision, enroll, sync, admit, replace', function () {
  this.timeout(1_800_000)
  let dir: string
  let repo: string
  let pg: DisposablePostgres
  let gw: TestGateway
  let mirror: ReleaseMirror
  let cloud: LocalCloud
  let stub: HetznerStub
  let operator: OperatorKey
  let env: NodeJS.ProcessEnv
  const fleetPath = () => join(repo, 'fleet.yaml')
  const git = (...args: string[]) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' }).trim()
  const fleetkit = (args: string[], timeout = 600_000) =>
    runFleetkit([...args, '--definition', fleetPath()], { env, timeout })

  function fleet() {
    const port = (url: string) => new URL(url).port
    return {
      version: 1,
      fleet: 'localcloud',
      // The gateway listens on every address; the machines dial it on the stub's bridge.
      gateway: {
        url: `https://${BRIDGE_ADDRESS}:${port(gw.agentUrl)}`,
        enrollUrl: `https://${BRIDGE_ADDRESS}:${port(gw.enrollUrl)}`,
      },
      release: { url: mirror.url, publicKey: mirror.publicKey, version: VERSION, caFile: 'mirror-ca.pem' },
      operators: { cidrs: [`${BRIDGE_ADDRESS}/32`], sshKeys: [operator.publicKey] },
      providers: { hetzner: { tokenEnv: 'HETZNER_API_TOKEN' } },
      pools: {
        app: {
          role: 'application',
          capacityBudget: { cpu: 16, memoryMiB: 32768, diskGiB: 400 },
          serverType: 'cx22',
          image: 'debian-12',
        },
      },
      // No ssh.host: each node is reached at the address its server has.
      nodes: ['app-1', 'app-2'].map((id) => ({
        id,
        pool: 'app',
        state: 'active',
        ssh: { user: 'ops' },
        maxCapacity: { cpu: 1.5, memoryMiB: 3072, diskGiB: 20 },
      })),
      canary: 'app-1',
    }
  }

  before(async () => {
    await assertHostsAvailable('container')
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-local-fleet-'))
    repo = join(dir, 'repo')
    await mkdir(repo)
    execFileSync('git', ['init', '-q', repo])
    git('config', 'user.email', 'local-cloud@fleet.internal')
    git('config', 'user.name', 'local cloud test')
    pg = await startDisposablePostgres()
    gw = await startTestGateway({
      postgresUrl: pg.url,
      mode: 'process',
      serverNames: ['localhost', '127.0.0.1', BRIDGE_ADDRESS],
      env: { FLEETKIT_ENROLL_BIND: '0.0.0.0:0', FLEETKIT_AGENT_BIND: '0.0.0.0:0' },
    })
    mirror = await startReleaseMirror(join(dir, 'mirror'), [VERSION], {
      [VERSION]: await readFile(await agentBundle()),
    })
    operator = await generateOperatorKey(dir)
    const bookworm = await goldenImage('bookworm')
    cloud = await LocalCloud.start({
      bridge: { name: BRIDGE, address: BRIDGE_ADDRESS, prefixLength: 24 },
      prebuiltImages: { 'debian-12': bookworm.rootfs },
    })
    stub = await startHetznerStub({ machines: cloud, actionDurationMs: 500 })
    await writeFile(join(repo, 'mirror-ca.pem'), mirror.caPem)
    env = {
      DATABASE_URL: gw.db.url,
      FLEETKIT_STATE_DIR: join(dir, 'state'),
      FLEETKIT_PKI_DIR: gw.pkiDir,
      ANSIBLE_PRIVATE_KEY_FILE: operator.privateKeyFile,
      HETZNER_API_URL: stub.url,
      HETZNER_API_TOKEN: stub.token,
    }
    await writeFile(fleetPath(), stringify(fleet()))
    git('add', 'fleet.yaml', 'mirror-ca.pem')
    git('commit', '-q', '-m', 'A')
  })

  after(async () => {
    await stub?.close()
    await mirror?.close()
    await gw?.close()
    await pg?.stop()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('provisions two nodes whose agents enroll; sync converges them at their addresses; admit', async () => {
    // app-2 with a data volume: a loop device its machine sees under the API's linux_device name.
    for (const [id, extra] of [
      ['app-1', []],
      ['app-2', ['--volume', '10']],
    ] as const) {
      const run = await fleetkit(['node', 'provision', id, '--region', 'fsn1', ...extra, '--json'])
      assert.equal(run.code, 0, run.stdout + run.stderr)
      const result = run.json.result as { publicIpv4: string; sshAddress: string }
      assert.match(result.publicIpv4, /^10\.234\.0\.\d+$/)
      assert.equal((await getNode(gw.db.pool, id))?.status, 'active', `${id} enrolled`)
    }
    assert.equal(cloud.loopDevices().length, 1, "app-2's volume")
    const sync = await fleetkit(['sync', '--ref', git('rev-parse', 'HEAD')], 900_000)
    assert.equal(sync.code, 0, sync.stdout + sync.stderr)
    const admitted = await fleetkit(['node', 'admit', 'app-1', '--json'], 120_000)
    assert.equal(admitted.code, 0, admitted.stdout + admitted.stderr)
    assert.equal((await getNode(gw.db.pool, 'app-1'))?.schedulable, true)
  })

  it('node replace brings up a successor; decommission stops and deletes the old machine exactly once', async () => {
    const old = Number((await getNode(gw.db.pool, 'app-1'))?.providerServerId)
    const replaced = await fleetkit(['node', 'replace', 'app-1', '--json'])
    assert.equal(replaced.code, 0, replaced.stdout + replaced.stderr)
    const successor = replaced.json.result.replacement as { node: string; publicIpv4: string }
    assert.equal(successor.node, 'app-1-r2')
    assert.equal((await getNode(gw.db.pool, 'app-1-r2'))?.status, 'active', 'the successor enrolled')
    assert.equal((await getNode(gw.db.pool, 'app-1'))?.status, 'draining')

    const retired = await fleetkit(['node', 'decommission', 'app-1', '--yes', '--json'], 300_000)
    assert.equal(retired.code, 0, retired.stdout + retired.stderr)
    assert.equal((await getNode(gw.db.pool, 'app-1'))?.status, 'retired')
    assert.deepEqual(
      cloud.events.filter((e) => e.event === 'delete').map((e) => e.serverId),
      [old],
      'the old server deleted once, nothing else',
    )
    assert.equal(stub.api.servers.has(old), false)
    // The delete's action ends once the machine has stopped; the command does not wait for it.
    await eventually(
      'the old machine stopped',
      async () => machineProcesses(machineNameOf(process.pid, old)).length === 0,
      {
        timeoutMs: 60_000,
      },
    )
  })

  it('nothing is left running once the stub ends', async () => {
    assert.ok(machineProcesses(`fk${process.pid.toString(36)}`).length > 0, 'app-2 and app-1-r2 run')
    const closing = stub
    stub = undefined as unknown as HetznerStub
    await closing.close()
    assert.deepEqual(machineProcesses(`fk${process.pid.toString(36)}`), [])
    assert.notEqual((await runProcess('ip', ['link', 'show', BRIDGE])).code, 0, 'the bridge is gone')
    assert.deepEqual(cloud.loopDevices(), [])
  })
})

/** nspawn processes whose machine name starts with PREFIX. */
function machineProcesses(prefix: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8')
          .split('\0')
          .some((arg) => arg.startsWith(`--machine=${prefix}`))
      } catch {
        return false
      }
    })
    .map(Number)
}
