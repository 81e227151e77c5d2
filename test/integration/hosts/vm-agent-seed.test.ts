// Issue 9's end-to-end test in a real VM: a host booted from fleetkit's own rendered agent seed
// (`fleetkit seed NODE --kind agent`) verifies the signed release served from this machine,
// enrolls with the gateway running here (reached through QEMU guestfwd at 10.0.2.100) and
// heartbeats from its own kernel; then site.yml converges it, and a second run changes nothing.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import type { Server } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { parse, stringify } from 'yaml'

import { packagePath } from '../../../src/package-root.js'
import { listNodeCertificates } from '../../../src/store/certificates.js'
import { getNode } from '../../../src/store/nodes.js'
import { GUEST_HOST_ADDRESS, type VmHost, assertHostsAvailable, runPlaybook, startVmHost, writeInventory } from '../../hosts/index.js'
import { agentBundle } from '../../support/agent-bundle.js'
import { runFleetkit } from '../../support/cli.js'
import { eventually } from '../../support/eventually.js'
import { type TestGateway, startTestGateway } from '../../support/gateway.js'
import { type DisposablePostgres, startDisposablePostgres } from '../../support/postgres.js'
import { packSignedRelease, releaseMirrorPki, serveFiles } from '../../support/release-mirror.js'

const NODE_ID = 'build-1'
/** The ports the guest dials at 10.0.2.100; each is forwarded to the real port on 127.0.0.1. */
const GUEST = { agent: 8443, enroll: 8444, release: 9443 }
const version = (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version

describe('end to end in a VM: fleetkit\'s own agent seed -> signed release from this machine -> enrolled and heartbeating -> site.yml', function () {
  this.timeout(1_200_000)
  let postgres: DisposablePostgres | undefined
  let gw: TestGateway | undefined
  let mirror: Server | undefined
  let vm: VmHost | undefined
  let dir: string
  let definitionFile: string
  let bundleSha256: string
  const requested: string[] = []

  before(async () => {
    await assertHostsAvailable('vm')
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-vm-e2e-'))
    postgres = await startDisposablePostgres()
    // The gateway's certificate names the address the guest dials.
    gw = await startTestGateway({ postgresUrl: postgres.url, serverNames: ['localhost', '127.0.0.1', GUEST_HOST_ADDRESS] })
    const bundleBytes = await readFile(await agentBundle())
    bundleSha256 = createHash('sha256').update(bundleBytes).digest('hex')
    const release = await packSignedRelease(dir, bundleBytes, version)
    const mirrorPki = await releaseMirrorPki(join(dir, 'mirror-pki'), [GUEST_HOST_ADDRESS])
    const served = await serveFiles(release.wwwRoot, mirrorPki, requested)
    mirror = served.server

    const definition = parse(await readFile(packagePath('examples', 'fleet.yaml'), 'utf8'))
    definition.gateway = { url: `https://${GUEST_HOST_ADDRESS}:${GUEST.agent}`, enrollUrl: `https://${GUEST_HOST_ADDRESS}:${GUEST.enroll}` }
    definition.release = { url: `https://${GUEST_HOST_ADDRESS}:${GUEST.release}/fleetkit-agent`, publicKey: release.publicKey, version, caFile: 'release-ca.pem' }
    await copyFile(mirrorPki.caFile, join(dir, 'release-ca.pem'))
    // ssh reaches the guest through QEMU's user network, from 10.0.2.2: the firewall admits the operator from there.
    definition.operators = { ...definition.operators, cidrs: ['10.0.2.2/32'] }
    // Without a declared data volume the agent unit starts at first boot: with one, it waits for the
    // data_volume role to mount it (ConditionPathIsMountPoint), which site.yml does later.
    // The data_volume role is proven on its own VM (test/integration/roles/vm.test.ts).
    for (const node of definition.nodes as Array<{ id: string; dataVolume?: unknown }>) {
      if (node.id === NODE_ID) delete node.dataVolume
    }
    definitionFile = join(dir, 'fleet.yaml')
    await writeFile(definitionFile, stringify(definition))

    const seedFile = join(dir, `${NODE_ID}.user-data`)
    const seeded = await runFleetkit(['seed', NODE_ID, '--kind', 'agent', '--definition', definitionFile, '--output', seedFile, '--json'], { env: cliEnv() })
    assert.equal(seeded.code, 0, seeded.stdout + seeded.stderr)

    const ports = (url: string) => Number(new URL(url).port)
    vm = await startVmHost({
      name: NODE_ID,
      seed: { userData: await readFile(seedFile, 'utf8') },
      guestForwards: [
        { guestPort: GUEST.agent, hostPort: ports(gw.agentUrl) },
        { guestPort: GUEST.enroll, hostPort: ports(gw.enrollUrl) },
        { guestPort: GUEST.release, hostPort: served.port },
      ],
    })
  })

  afterEach(async function () {
    if (this.currentTest?.state !== 'failed' || !vm) return
    // What the seed and the agent said on the host: the reason of a failure is there.
    const logs = await vm.ssh('tail -n 40 /var/log/cloud-init-output.log; journalctl -u fleetkit-agent.service -n 30 --no-pager', { timeoutMs: 30_000 })
    process.stderr.write(`--- ${NODE_ID}: cloud-init output and agent journal ---\n${logs.stdout}${logs.stderr}\n`)
  })

  after(async () => {
    await vm?.stop()
    if (mirror) await new Promise((resolve) => mirror!.close(resolve))
    await gw?.close()
    await postgres?.stop()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  const cliEnv = () => ({ DATABASE_URL: gw!.db.url, FLEETKIT_PKI_DIR: gw!.pkiDir, FLEETKIT_STATE_DIR: join(dir, 'state') })

  it('the seed verified the signed release from this machine\'s mirror and installed the real agent', async () => {
    assert.deepEqual(new Set(requested), new Set([`/fleetkit-agent/${version}/SHA256SUMS`, `/fleetkit-agent/${version}/SHA256SUMS.sig`,
      `/fleetkit-agent/${version}/fleetkit-agent-${version}-linux-amd64.tar.zst`]))
    const installed = await vm!.sshOk('sha256sum /usr/local/bin/fleetkit-agent; stat -c %a /usr/local/bin/fleetkit-agent; /usr/local/bin/fleetkit-agent --version')
    const [sum, mode, printed] = installed.stdout.trim().split('\n')
    assert.equal(sum?.split(' ')[0], bundleSha256, 'the installed agent is the bundle, byte for byte')
    assert.equal(mode, '755')
    assert.match(printed ?? '', new RegExp(version.replace(/\./g, '\\.')))
  })

  it('the agent enrolled with the gateway running here and runs under systemd', async () => {
    assert.equal((await getNode(gw!.db.pool, NODE_ID))?.status, 'active')
    assert.equal((await listNodeCertificates(gw!.db.pool, NODE_ID)).length, 1)
    const state = await vm!.sshOk('systemctl is-active fleetkit-agent.service; test -e /var/lib/fleetkit/enrollment-secret && echo secret-left || echo secret-gone')
    assert.deepEqual(state.stdout.trim().split('\n'), ['active', 'secret-gone'])
  })

  it('heartbeats from the VM: its host facts (its own kernel) reach the database', async () => {
    const kernel = (await vm!.sshOk('uname -r')).stdout.trim()
    const seen = await eventually('a heartbeat with the VM\'s host facts', async () => {
      const node = await getNode(gw!.db.pool, NODE_ID)
      return node?.hostFactsAt && node.hostKernel === kernel ? node : undefined
    }, { timeoutMs: 120_000, intervalMs: 1_000 })
    assert.equal(seen.hostAgentVersion, version)
    assert.equal(seen.hostCpuCount, 2)
  })

  // The inventory is fleetkit's own (`fleetkit inventory`) with the connection pointed at the VM.
  // The VM runs Debian 12 (a testOnly release) with 1 GiB, below the production minimum.
  it('site.yml converges the enrolled host, and a second run reports changed=0', async () => {
    const rendered = await runFleetkit(['inventory', '--definition', definitionFile, '--output', '-'], { env: cliEnv() })
    assert.equal(rendered.code, 0, rendered.stderr)
    const fleetInventory = parse(rendered.stdout) as { all: { vars: Record<string, unknown>; hosts?: Record<string, Record<string, unknown>>; children?: Record<string, { hosts?: Record<string, Record<string, unknown> | null> }> } }
    const nodeVars = findHostVars(fleetInventory, NODE_ID)
    const connection = new Set(['ansible_host', 'ansible_port', 'ansible_user', 'ansible_ssh_common_args', 'ansible_ssh_private_key_file'])
    const vars = { ...fleetInventory.all.vars, ...Object.fromEntries(Object.entries(nodeVars).filter(([k]) => !connection.has(k))) }
    const inventory = await writeInventory([vm!], join(dir, 'ansible'), { [NODE_ID]: vars },
      Object.fromEntries(Object.entries(fleetInventory.all.children ?? {}).filter(([, g]) => g.hosts && NODE_ID in g.hosts).map(([group]) => [group, [NODE_ID]])))
    // ssh reaches the guest on a forwarded port (ansible_port) but sshd listens on 22 inside it.
    const extraVars = { preflight_allow_test_releases: true, preflight_enforce_size: false, firewall_ssh_port: 22 }
    // Plain ssh, not mitogen: the dead-man switch's new-connection confirmation is proven on ssh
    // (under mitogen a templated ansible_timeout reaches its connect deadline as a string).
    const first = await runPlaybook({ inventory, playbook: 'site.yml', extraVars })
    assert.equal(first.code, 0, `${first.stdout.slice(-4000)}\n${first.stderr.slice(-2000)}`)
    const second = await runPlaybook({ inventory, playbook: 'site.yml', extraVars })
    assert.equal(second.code, 0, second.stdout.slice(-4000))
    assert.equal(second.recap[NODE_ID]?.changed, 0, second.stdout.slice(-4000))
    assert.equal((await vm!.sshOk('systemctl is-active fleetkit-agent.service')).stdout.trim(), 'active')
  })
})

/** The host vars fleetkit's inventory renders for NODE (under all.hosts or a group's hosts). */
function findHostVars(inventory: { all: { hosts?: Record<string, Record<string, unknown>>; children?: Record<string, { hosts?: Record<string, Record<string, unknown> | null> }> } }, node: string): Record<string, unknown> {
  const direct = inventory.all.hosts?.[node]
  if (direct) return direct
  for (const group of Object.values(inventory.all.children ?? {})) {
    const vars = group.hosts?.[node]
    if (vars) return vars
  }
  return {}
}
