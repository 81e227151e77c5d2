// `fleetkit reconcile` on one real container host (issue 39): a Debian host booted from an agent seed
// (it enrolls at first boot with a real gateway, the real agent from a signed release mirror), converged by
// `fleetkit sync` and admitted; then a file a role manages is changed by hand, `fleetkit reconcile --once`
// finds it with its drift check and repairs it, both runs in the ledger with actor reconcile; after
// `fleetkit node hold` a pass does nothing for it.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { parse, stringify } from 'yaml'

import { packagePath } from '../../../src/package-root.js'
import { getNode } from '../../../src/store/nodes/nodes.js'
import { getSyncRun, listSyncNodes } from '../../../src/store/sync/sync-ledger.js'
import { assertHostsAvailable, type ContainerHost, OPERATOR_ADDRESS, startContainerHosts } from '../../hosts/index.js'
import { generateOperatorKey } from '../../hosts/keys.js'
import { agentBundle } from '../../support/agent-bundle.js'
import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'
import { type TestGateway, startTestGateway } from '../../support/gateway.js'
import { type DisposablePostgres, startDisposablePostgres } from '../../support/postgres.js'
import { TEST_HARNESS_VARS } from '../roles/role-runs.js'
import { type ReleaseMirror, startReleaseMirror } from '../roles/release-mirror.js'

const NODE = 'rec-1'
const VERSION = (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version
/** A file the br_netfilter role manages (copy, 0644): editing it by hand is drift, harmless to the host. */
const MANAGED = '/etc/modules-load.d/fleetkit.conf'

describe('fleetkit reconcile on a container host', function () {
  // The first sync converges a fresh host: minutes on a loaded machine.
  this.timeout(1_800_000)
  let dir: string
  let repo: string
  let server: DisposablePostgres
  let gw: TestGateway
  let mirror: ReleaseMirror
  let host: ContainerHost
  let env: NodeJS.ProcessEnv

  const fleetPath = () => join(repo, 'fleet.yaml')
  const git = (...args: string[]) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' }).trim()
  const fleetkit = (args: string[]) => runFleetkit(args, { env, timeout: 900_000 })

  function fleet(address: string, operatorKey: string): Record<string, unknown> {
    return {
      version: 1,
      fleet: 'reconciletest',
      gateway: {
        url: `https://${OPERATOR_ADDRESS}:${new URL(gw.agentUrl).port}`,
        enrollUrl: `https://${OPERATOR_ADDRESS}:${new URL(gw.enrollUrl).port}`,
      },
      release: { url: mirror.url, publicKey: mirror.publicKey, version: VERSION, caFile: 'mirror-ca.pem' },
      operators: { cidrs: [`${OPERATOR_ADDRESS}/32`], sshKeys: [operatorKey] },
      pools: { app: { role: 'application', capacityBudget: { cpu: 16, memoryMiB: 32768, diskGiB: 400 } } },
      nodes: [
        {
          id: NODE,
          pool: 'app',
          state: 'active',
          ssh: { host: address, user: 'ops' },
          maxCapacity: { cpu: 2, memoryMiB: 4096, diskGiB: 40 },
        },
      ],
      canary: NODE,
    }
  }

  before(async () => {
    await assertHostsAvailable('container')
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-reconcile-'))
    repo = join(dir, 'repo')
    await mkdir(repo)
    execFileSync('git', ['init', '-q', repo])
    git('config', 'user.email', 'reconcile-test@fleet.internal')
    git('config', 'user.name', 'reconcile test')
    server = await startDisposablePostgres()
    gw = await startTestGateway({
      postgresUrl: server.url,
      mode: 'process',
      serverNames: ['localhost', '127.0.0.1', OPERATOR_ADDRESS],
      env: { FLEETKIT_ENROLL_BIND: '0.0.0.0:0', FLEETKIT_AGENT_BIND: '0.0.0.0:0' },
    })
    mirror = await startReleaseMirror(join(dir, 'mirror'), [VERSION], {
      [VERSION]: await readFile(await agentBundle()),
    })
    const operator = await generateOperatorKey(dir)
    await writeFile(join(repo, 'mirror-ca.pem'), mirror.caPem)
    const extraVars = join(dir, 'harness-vars.json')
    await writeFile(extraVars, JSON.stringify({ ...TEST_HARNESS_VARS, agent_update_ca_pem: mirror.caPem }))
    env = {
      DATABASE_URL: gw.db.url,
      FLEETKIT_STATE_DIR: join(dir, 'state'),
      FLEETKIT_PKI_DIR: gw.pkiDir,
      ANSIBLE_PRIVATE_KEY_FILE: operator.privateKeyFile,
      FLEETKIT_SYNC_EXTRA_VARS_FILE: extraVars,
      FLEETKIT_DEFINITION: fleetPath(),
      FLEETKIT_ACTOR: 'ops@desk',
    }
    // The agent seed pins the host key in the state and enrolls the host at first boot.
    await writeFile(fleetPath(), stringify(fleet(`${NODE}.fleet.internal`, operator.publicKey)))
    const output = join(dir, `${NODE}.user-data`)
    const seeded = await fleetkit(['seed', NODE, '--kind', 'agent', '--output', output])
    assert.equal(seeded.code, 0, seeded.stdout + seeded.stderr)
    const userData = await readFile(output, 'utf8')
    const keys = (parse(userData) as { ssh_keys: { ed25519_private: string; ed25519_public: string } }).ssh_keys
    ;[host] = (await startContainerHosts(1, {
      name: NODE,
      release: 'trixie',
      operator,
      hostKey: { privateKey: keys.ed25519_private, publicKey: keys.ed25519_public },
      seed: { userData },
    })) as [ContainerHost]
    await writeFile(fleetPath(), stringify(fleet(host.address, operator.publicKey)))
    git('add', 'fleet.yaml', 'mirror-ca.pem')
    git('commit', '-q', '-m', 'the fleet')
    // Converged by a person's sync, then admitted: a node reconcile may touch.
    const synced = await fleetkit(['sync'])
    assert.equal(synced.code, 0, synced.stdout + synced.stderr)
    const admitted = await fleetkit(['node', 'admit', NODE, '--definition', fleetPath()])
    assert.equal(admitted.code, 0, admitted.stdout + admitted.stderr)
  })

  after(async () => {
    await host?.stop()
    await mirror?.close()
    await gw?.close()
    await server?.stop()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('repairs a file changed by hand and records both runs with actor reconcile; a hold stops it', async () => {
    const converged = await fleetkit(['reconcile', '--once', '--json'])
    assert.equal(converged.code, 0, converged.stdout + converged.stderr)
    assert.equal(converged.json.result.last.outcome, 'nothing_to_do', 'a converged host needs nothing')

    const wanted = (await host.sshOk(`cat ${MANAGED}`)).stdout
    await host.sshOk(`echo 'edited by hand' >> ${MANAGED}`)
    const pass = await fleetkit(['reconcile', '--once', '--parallel', '1', '--max-runs-per-hour', '2', '--json'])
    assert.equal(pass.code, 0, pass.stdout + pass.stderr)
    assertMatchesOutputSchema('reconcile', pass.json)
    const last = pass.json.result.last
    assert.equal(last.outcome, 'repaired', JSON.stringify(last))
    assert.deepEqual(
      last.repair.map((c: { nodeId: string; why: string }) => [c.nodeId, c.why]),
      [[NODE, 'drifted']],
    )
    assert.equal((await host.sshOk(`cat ${MANAGED}`)).stdout, wanted, 'the file is as the role writes it again')
    // The ledger: the drift check found it, the sync repaired it, both started by reconcile.
    const drift = await getSyncRun(gw.db.pool, last.driftCheck.runId)
    assert.deepEqual([drift?.kind, drift?.startedBy, drift?.outcome], ['drift', 'reconcile', 'drifted'])
    const [run] = last.runs
    const synced = await getSyncRun(gw.db.pool, run.runId)
    assert.deepEqual([synced?.kind, synced?.startedBy, synced?.outcome], ['sync', 'reconcile', 'converged'])
    assert.deepEqual(
      (await listSyncNodes(gw.db.pool, run.runId)).map((n) => [n.nodeId, n.phase, n.state]),
      [[NODE, 'canary', 'changed']],
    )
    assert.equal(last.budget.used, 1)

    // Held: the next pass leaves it alone, drifted or not; nothing runs on it.
    const held = await fleetkit(['node', 'hold', NODE, '--reason', 'kernel debugging'])
    assert.equal(held.code, 0, held.stdout + held.stderr)
    await host.sshOk(`echo 'edited by hand again' >> ${MANAGED}`)
    const hands = await fleetkit(['reconcile', '--once', '--json'])
    assert.equal(hands.code, 0, hands.stdout + hands.stderr)
    const off = hands.json.result.last
    assert.equal(off.outcome, 'nothing_to_do')
    assert.equal(off.driftCheck, null, 'no node it may touch: not even a drift check')
    assert.match(off.skipped[0].reason, /^held by ops@desk since .*: kernel debugging$/)
    assert.match((await host.sshOk(`cat ${MANAGED}`)).stdout, /edited by hand again/)
    assert.equal((await getNode(gw.db.pool, NODE))?.status, 'active', 'a hold changes nothing of the node')
  })
})
