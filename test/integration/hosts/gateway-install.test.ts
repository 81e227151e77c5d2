// `fleetkit gateway install` on a real control host: a systemd-nspawn container (systemd as PID 1)
// with this build of fleetkit and this machine's Node.js copied in. Root's state is taken over, the
// unit runs the gateway and its embedded PostgreSQL as fleetkit-gateway, root and a member of the
// group see one database; then the operator's path to a first node, all on the control host: a
// release signed here is published with `fleetkit release publish`, `fleetkit seed` renders an agent
// seed whose release.url is the gateway's own enrollment listener, and a second container booted from
// that seed installs the agent from the gateway, enrolls and heartbeats. A reboot of the control host
// brings the unit, its database and the node's heartbeats back; uninstall stops and removes the unit.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { parse, stringify } from 'yaml'

import { packagePath } from '../../../src/package-root.js'
import { type ContainerHost, OPERATOR_ADDRESS, assertHostsAvailable, startContainerHosts } from '../../hosts/index.js'
import { agentBundle } from '../../support/agent-bundle.js'
import { FLEETKIT, VERSION, copyInto, eventually, installFleetkit } from '../../support/control-host.js'
import { packSignedRelease } from '../../support/release-mirror.js'

/** The node the second container becomes: the example's canary, booted by hand (no provider, no ssh block). */
const NODE_ID = 'build-1'

describe('gateway install on a control host (container)', function () {
  this.timeout(600_000)
  let host: ContainerHost
  let agentHost: ContainerHost | undefined
  let scratch: string

  before(async function () {
    await assertHostsAvailable('container')
    const [started] = await startContainerHosts(1, { name: 'control' })
    host = started!
    await installFleetkit(host)
    await host.sshOk('useradd --create-home --shell /bin/bash op')
    scratch = await mkdtemp(join(tmpdir(), 'fleetkit-control-host-'))
  })
  afterEach(async function () {
    if (this.currentTest?.state !== 'failed') return
    // What the node, the seed, the agent and the gateway said: the reason of a failure is there.
    const say = async (what: string, on: ContainerHost | undefined, command: string) => {
      const r = await on?.ssh(command, { timeoutMs: 30_000 }).catch((e: unknown) => ({ stdout: String(e), stderr: '' }))
      process.stderr.write(`--- ${what}:\n${r ? r.stdout + r.stderr : '(no host)'}\n`)
    }
    await say('node show', host, `${FLEETKIT} node show ${NODE_ID} --json | head -c 3000`)
    await say('gateway journal', host, 'journalctl -u fleetkit-gateway --no-pager | tail -25')
    await say('agent journal', agentHost, 'journalctl -u fleetkit-agent --no-pager | tail -25')
    await say('cloud-init output', agentHost, 'tail -30 /var/log/cloud-init-output.log')
  })
  after(async () => {
    await agentHost?.stop()
    await host?.stop()
    if (scratch) await rm(scratch, { recursive: true, force: true })
  })

  const asRoot = (args: string) => host.ssh(`${FLEETKIT} ${args}`, { timeoutMs: 180_000 })
  const asMember = (args: string) => host.ssh(`runuser -u op -- ${FLEETKIT} ${args}`, { timeoutMs: 180_000 })
  const json = (stdout: string) => JSON.parse(stdout) as Record<string, unknown>
  const postmasterUser = async () =>
    (await host.ssh("ps -o user= -C postgres | sort -u | tr '\\n' ' '")).stdout.trim() || undefined

  it('refuses a member of no group (not root), naming sudo', async () => {
    const r = await asMember('gateway install --json')
    assert.notEqual(r.code, 0)
    assert.equal(json(r.stdout).code, 'GATEWAY_INSTALL_NOT_ROOT', r.stdout)
    assert.match(r.stdout, /sudo fleetkit gateway install/)
  })

  it("refuses while root's own server runs, then takes root's state over", async () => {
    // Root's state as a new operator makes it: the CA, then a command that starts the database (as postgres).
    // The gateway's certificate names the address agents dial; its listeners bind that address, not loopback.
    await host.sshOk(`${FLEETKIT} ca init --server-name localhost --server-name ${host.address}`, {
      timeoutMs: 180_000,
    })
    await host.sshOk(
      `mkdir -p /etc/fleetkit && printf 'FLEETKIT_ENROLL_BIND=0.0.0.0:8444\\nFLEETKIT_AGENT_BIND=0.0.0.0:8443\\n' > /etc/fleetkit/gateway.env`,
    )
    assert.equal((await asRoot('node list --json')).code, 0)
    assert.equal(await postmasterUser(), 'postgres')
    const refused = await asRoot('gateway install --json')
    assert.equal(json(refused.stdout).code, 'GATEWAY_INSTALL_SERVER_RUNNING', refused.stdout)
    assert.equal((await host.ssh('test -e /etc/systemd/system/fleetkit-gateway.service')).code, 1, 'nothing written')

    await host.sshOk(`${FLEETKIT} db stop`)
    const r = await asRoot('gateway install --json')
    assert.equal(r.code, 0, `${r.stdout}${r.stderr}`)
    const result = json(r.stdout).result as Record<string, unknown>
    assert.equal(result.changed, true)
    assert.equal(result.tookOver, true)
    assert.equal(result.execStart, '/usr/local/bin/node /opt/fleetkit/bin/run.js gateway serve')
    assert.equal(result.next, 'systemctl status fleetkit-gateway')
    assert.equal((await host.ssh('systemctl is-active fleetkit-gateway')).stdout.trim(), 'active')
    assert.equal(
      (await host.ssh('stat -c %U:%G:%a /var/lib/fleetkit')).stdout.trim(),
      'fleetkit-gateway:fleetkit-gateway:2770',
    )
    assert.equal(await postmasterUser(), 'fleetkit-gateway')
    // The server the gateway started lives in the unit's cgroup.
    const pid = (await host.sshOk('head -1 /var/lib/fleetkit/postgres/data/postmaster.pid')).stdout.trim()
    assert.match((await host.sshOk(`cat /proc/${pid}/cgroup`)).stdout, /fleetkit-gateway\.service/)

    const again = await asRoot('gateway install')
    assert.equal(again.code, 0, again.stderr)
    assert.match(again.stdout, /nothing changed/)
  })

  it('root and a member of the group see one database', async () => {
    await host.sshOk('usermod -a -G fleetkit-gateway op')
    const root = await asRoot('events --type gateway_installed --json')
    const member = await asMember('events --type gateway_installed --json')
    assert.equal(root.code, 0, root.stderr)
    assert.equal(member.code, 0, `${member.stdout}${member.stderr}`)
    assert.deepEqual(json(member.stdout).result, json(root.stdout).result)
    assert.equal((json(root.stdout).result as { events: unknown[] }).events.length, 1)
    assert.equal((await asMember('node list --json')).code, 0)
    assert.equal(
      (await host.ssh('runuser -u op -- test -r /var/lib/fleetkit/pki/ca.key')).code,
      1,
      "the CA key stays the account's",
    )
  })

  it('a node seeded on the control host installs the release the gateway publishes, enrolls and heartbeats', async () => {
    // The release as an operator makes it (pack, sign with their own key): here, on this machine.
    const release = await packSignedRelease(scratch, await readFile(await agentBundle()), VERSION)
    await copyInto(host, join(release.wwwRoot, 'fleetkit-agent', VERSION), `/root/release/${VERSION}`)
    const definition = parse(await readFile(packagePath('examples', 'fleet.yaml'), 'utf8'))
    const enrollUrl = `https://${host.address}:8444`
    definition.gateway = { url: `https://${host.address}:8443`, enrollUrl }
    // release.url is the enrollment listener: seeds pin the gateway CA for the download (no caFile).
    definition.release = { url: enrollUrl, publicKey: release.publicKey, version: VERSION }
    // The seed's first-boot firewall lets SSH in from the operator CIDRs only: this machine's bridge address.
    definition.operators = { ...definition.operators, cidrs: [`${OPERATOR_ADDRESS}/32`] }
    const nodes = definition.nodes as Array<{ id: string; pool: string; [key: string]: unknown }>
    const node = nodes.find((n) => n.id === NODE_ID)!
    // Booted by hand: no provider for its pool, no data volume to wait for; the helper logs in as root with
    // its own pinned key, which the seed's ssh block (account, host key) would replace.
    delete node.dataVolume
    delete node.ssh
    delete node.hostKey
    delete (definition.pools as Record<string, { image?: string }>)[node.pool]!.image
    definition.nodes = nodes.filter((n) => n.id === NODE_ID || n.pool !== node.pool)
    await host.sshOk('cat > /root/fleet.yaml', { input: stringify(definition) })

    const published = await asRoot(
      `release publish --dir /root/release/${VERSION} --version ${VERSION} -d /root/fleet.yaml --json`,
    )
    assert.equal(published.code, 0, `${published.stdout}${published.stderr}`)
    assert.equal((json(published.stdout).result as { status: string }).status, 'published')
    const seeded = await asRoot(
      `seed ${NODE_ID} --kind agent -d /root/fleet.yaml --output /root/${NODE_ID}.user-data --json`,
    )
    assert.equal(seeded.code, 0, `${seeded.stdout}${seeded.stderr}`)
    const userData = (await host.sshOk(`cat /root/${NODE_ID}.user-data`)).stdout

    const [started] = await startContainerHosts(1, { name: 'agent', seed: { userData } })
    agentHost = started!
    // The agent came from the gateway: the bytes of the bundle signed here, the version it reports.
    const installed = (await agentHost.sshOk('sha256sum /usr/local/bin/fleetkit-agent')).stdout
    const bundleSha = createHash('sha256')
      .update(await readFile(await agentBundle()))
      .digest('hex')
    assert.ok(installed.startsWith(bundleSha), `the agent installed is the release published: ${installed}`)
    const shown = await eventually(
      'the node enrolled and heartbeating',
      async () => {
        const r = await asMember(`node show ${NODE_ID} --json`)
        const n =
          r.code === 0
            ? (json(r.stdout).result as { node: { status: string; heartbeatAgeSeconds: number | null } }).node
            : undefined
        return n && n.status === 'active' && n.heartbeatAgeSeconds !== null && n.heartbeatAgeSeconds < 60
          ? n
          : undefined
      },
      180_000,
    )
    assert.equal(shown.status, 'active')
  })

  it('comes back after a reboot: the unit, the gateway and its database', async () => {
    await host.reboot()
    await eventually('the gateway active', async () =>
      (await host.ssh('systemctl is-active fleetkit-gateway')).stdout.trim() === 'active' ? true : undefined,
    )
    await eventually('the database running as the account', async () =>
      (await postmasterUser()) === 'fleetkit-gateway' ? true : undefined,
    )
    const member = await asMember('events --type gateway_installed --json')
    assert.equal(member.code, 0, `${member.stdout}${member.stderr}`)
    assert.equal((json(member.stdout).result as { events: unknown[] }).events.length, 1)
    // The node's agent kept its certificate through the outage: its heartbeats land again.
    const since = (await host.sshOk('date -u +%s')).stdout.trim()
    await eventually(
      'a heartbeat from the node after the reboot',
      async () => {
        const r = await asMember(`node show ${NODE_ID} --json`)
        const n =
          r.code === 0
            ? (json(r.stdout).result as { node: { status: string; lastSeenAt: string | null } }).node
            : undefined
        return n?.lastSeenAt && Date.parse(n.lastSeenAt) / 1000 > Number(since) && n.status === 'active'
          ? true
          : undefined
      },
      180_000,
    )
  })

  it('uninstall stops and removes the unit and keeps state and account', async () => {
    const r = await asRoot('gateway uninstall --json')
    assert.equal(r.code, 0, `${r.stdout}${r.stderr}`)
    const result = json(r.stdout).result as Record<string, unknown>
    assert.equal(result.stateKept, true)
    assert.equal(result.accountRemoved, false)
    assert.equal((await host.ssh('test -e /etc/systemd/system/fleetkit-gateway.service')).code, 1)
    assert.equal(await postmasterUser(), undefined, 'no server left running')
    assert.equal((await host.ssh('getent passwd fleetkit-gateway')).code, 0)
    const events = await asRoot('events --type gateway_uninstalled --json')
    assert.equal((json(events.stdout).result as { events: unknown[] }).events.length, 1)
    // Root started the server (as the account) for that command.
    assert.equal(await postmasterUser(), 'fleetkit-gateway')
  })

  it('uninstall --remove-account gives the state back to root, whose commands keep working', async () => {
    const r = await asRoot('gateway uninstall --remove-account --json')
    assert.equal(r.code, 0, `${r.stdout}${r.stderr}`)
    assert.equal((json(r.stdout).result as Record<string, unknown>).accountRemoved, true)
    assert.equal((await host.ssh('getent passwd fleetkit-gateway')).code, 2)
    assert.equal((await host.sshOk('stat -c %U:%a /var/lib/fleetkit')).stdout.trim(), 'root:700')
    assert.equal((await host.sshOk('stat -c %U /var/lib/fleetkit/postgres/data')).stdout.trim(), 'postgres')
    const list = await asRoot('events --type gateway_uninstalled --json')
    assert.equal(list.code, 0, `${list.stdout}${list.stderr}`)
    assert.equal((json(list.stdout).result as { events: unknown[] }).events.length, 2)
    assert.equal(await postmasterUser(), 'postgres')
  })
})
