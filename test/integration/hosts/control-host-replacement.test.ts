// The control-host replacement drill (docs/state.md, "Replacing the control host") on real containers.
// Control host A runs the gateway as `gateway install` sets it up, archives its state and ships it over
// SSH to archive host B (an sshd, a user, a directory; B's host key pinned). A node seeded by A enrolls
// with A's gateway at a floating address (what operators use: a floating IP or a DNS name), the
// address its certificate names. After the base backup the node enrolls and is held, and that WAL is
// shipped. Then A is destroyed; a fresh container C takes the floating address, fetches the archive,
// restores it to the latest shipped segment and installs the gateway (docs/state.md's runbook, step by
// step): every row is back, the later ones too, the agent's next heartbeats land on C with the
// certificate A's CA issued it, and C's shipping timer's service ships the new timeline as the gateway's
// account. No sync, no second agent: the cheapest drill that proves the runbook.
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { parse, stringify } from 'yaml'

import { packagePath } from '../../../src/package-root.js'
import {
  type ContainerHost,
  OPERATOR_ADDRESS,
  PREFIX_LENGTH,
  assertHostsAvailable,
  startContainerHosts,
} from '../../hosts/index.js'
import { allocateAddress, releaseAddress } from '../../hosts/network.js'
import { agentBundle } from '../../support/agent-bundle.js'
import { FLEETKIT, VERSION, copyInto, eventually, installFleetkit } from '../../support/control-host.js'
import { packSignedRelease } from '../../support/release-mirror.js'

const NODE_ID = 'build-1'
const ARCHIVE_DIR = '/var/backups/fleetkit-wal'
const REMOTE_DIR = '/srv/fleetkit-archive'
const IDENTITY = '/root/.ssh/fleetkit-archive'
const AGENT_CERT = '/var/lib/fleetkit/pki/agent.pem'

const json = (stdout: string) => JSON.parse(stdout) as { code?: string; result: Record<string, unknown> }

describe('replacing the control host from the off-host archive (containers)', function () {
  this.timeout(900_000)
  let control: ContainerHost | undefined
  let vault: ContainerHost
  let replacement: ContainerHost
  let agent: ContainerHost | undefined
  let scratch: string
  /** The gateway's floating address: held by A, then by C; the agents and the certificate name it. */
  let floating: string
  let remoteUrl: string

  const fleetkit = async (host: ContainerHost, args: string) => {
    const r = await host.ssh(`${FLEETKIT} ${args}`, { timeoutMs: 300_000 })
    assert.equal(r.code, 0, `fleetkit ${args}:\n${r.stdout}${r.stderr}`)
    return r.stdout
  }
  const fleetkitJson = async (host: ContainerHost, args: string) => json(await fleetkit(host, `${args} --json`)).result
  const heartbeatAfter = (host: ContainerHost, since: number) =>
    eventually(
      'a heartbeat from the node',
      async () => {
        const r = await host.ssh(`${FLEETKIT} node show ${NODE_ID} --json`, { timeoutMs: 60_000 })
        const n =
          r.code === 0
            ? (json(r.stdout).result as { node: { status: string; lastSeenAt: string | null } }).node
            : undefined
        return n?.lastSeenAt && Date.parse(n.lastSeenAt) / 1000 > since && n.status === 'active' ? n : undefined
      },
      240_000,
    )
  const clockOf = async (host: ContainerHost) => Number((await host.sshOk('date -u +%s')).stdout.trim())

  before(async function () {
    await assertHostsAvailable('container')
    // C is booted with the others (boots overlap) and left untouched until A is gone.
    const [a, b, c] = await Promise.all([
      startContainerHosts(1, { name: 'control-a' }),
      startContainerHosts(1, { name: 'vault-b' }),
      startContainerHosts(1, { name: 'control-c' }),
    ])
    control = a[0]!
    vault = b[0]!
    replacement = c[0]!
    floating = allocateAddress()
    scratch = await mkdtemp(join(tmpdir(), 'fleetkit-replacement-'))
    await Promise.all([installFleetkit(control), installFleetkit(replacement)])
    // B, the archive host: a user that owns the directory the archive goes to.
    await vault.sshOk(
      `useradd --create-home --shell /bin/bash archive && install -d -o archive -g archive -m 0700 ${REMOTE_DIR} /home/archive/.ssh`,
    )
    remoteUrl = `ssh://archive@${vault.address}${REMOTE_DIR}`
  })
  afterEach(async function () {
    if (this.currentTest?.state !== 'failed') return
    const say = async (what: string, on: ContainerHost | undefined, command: string) => {
      const r = await on?.ssh(command, { timeoutMs: 30_000 }).catch((e: unknown) => ({ stdout: String(e), stderr: '' }))
      process.stderr.write(`--- ${what}:\n${r ? r.stdout + r.stderr : '(no host)'}\n`)
    }
    const gateway = control ?? replacement
    await say('node show', gateway, `${FLEETKIT} node show ${NODE_ID} --json | head -c 3000`)
    await say('db status', gateway, `${FLEETKIT} db status | head -40`)
    await say('gateway journal', gateway, 'journalctl -u fleetkit-gateway --no-pager | tail -25')
    await say('agent journal', agent, 'journalctl -u fleetkit-agent --no-pager | tail -25')
  })
  after(async () => {
    await agent?.stop()
    await control?.stop()
    await replacement?.stop()
    await vault?.stop()
    if (floating) releaseAddress(floating)
    if (scratch) await rm(scratch, { recursive: true, force: true })
  })

  /** Authorises HOST's archive key (made there, never copied) on the vault. */
  async function authorizeOnVault(host: ContainerHost, key: string): Promise<void> {
    await host.sshOk(`ssh-keygen -q -t ed25519 -N '' -f ${key} -C root@${host.name}`)
    const pub = (await host.sshOk(`cat ${key}.pub`)).stdout.trim()
    await vault.sshOk(
      `echo '${pub}' >> /home/archive/.ssh/authorized_keys && chown archive:archive /home/archive/.ssh/authorized_keys && chmod 0600 /home/archive/.ssh/authorized_keys`,
    )
  }

  it('control host A: the gateway installed on an archived state, shipped to B', async () => {
    const a = control!
    await a.sshOk(`ip addr add ${floating}/${PREFIX_LENGTH} dev host0`)
    await fleetkit(a, `ca init --server-name ${floating}`)
    await a.sshOk(
      `mkdir -p /etc/fleetkit && printf 'FLEETKIT_ENROLL_BIND=0.0.0.0:8444\\nFLEETKIT_AGENT_BIND=0.0.0.0:8443\\n' > /etc/fleetkit/gateway.env`,
    )
    // The shortest archive timeout: the heartbeats' WAL reaches the archive within 30 s.
    await fleetkit(a, `db archive enable ${ARCHIVE_DIR} --archive-timeout 30`)
    await fleetkit(a, 'db stop')
    await fleetkit(a, 'gateway install')
    // docs/gateway.md: the install hands an archive made before it to the account.
    assert.equal((await a.sshOk(`stat -c %U ${ARCHIVE_DIR}`)).stdout.trim(), 'fleetkit-gateway')
    await authorizeOnVault(a, IDENTITY)
    const added = await fleetkitJson(
      a,
      `db archive remote add ${remoteUrl} --host-key '${vault.knownHostsLine}' --identity ${IDENTITY}`,
    )
    assert.equal(added.url, remoteUrl)
    await fleetkit(a, 'db archive base-backup')
    const shipped = await fleetkitJson(a, 'db archive ship')
    assert.ok((shipped.shipped as unknown[]).length > 0, JSON.stringify(shipped))
    assert.equal((await vault.ssh(`cd ${REMOTE_DIR}/base && sha256sum -c --strict --quiet *.sha256`)).code, 0)
  })

  it('a node seeded by A enrolls at the floating address and heartbeats; the later changes are shipped', async () => {
    const a = control!
    const release = await packSignedRelease(scratch, await readFile(await agentBundle()), VERSION)
    await copyInto(a, join(release.wwwRoot, 'fleetkit-agent', VERSION), `/root/release/${VERSION}`)
    const definition = parse(await readFile(packagePath('examples', 'fleet.yaml'), 'utf8'))
    const enrollUrl = `https://${floating}:8444`
    definition.gateway = { url: `https://${floating}:8443`, enrollUrl }
    definition.release = { url: enrollUrl, publicKey: release.publicKey, version: VERSION }
    definition.operators = { ...definition.operators, cidrs: [`${OPERATOR_ADDRESS}/32`] }
    const nodes = definition.nodes as Array<{ id: string; pool: string; [key: string]: unknown }>
    const node = nodes.find((n) => n.id === NODE_ID)!
    delete node.dataVolume
    delete node.ssh
    delete node.hostKey
    delete (definition.pools as Record<string, { image?: string }>)[node.pool]!.image
    definition.nodes = nodes.filter((n) => n.id === NODE_ID || n.pool !== node.pool)
    await a.sshOk('cat > /root/fleet.yaml', { input: stringify(definition) })
    await fleetkit(a, `release publish --dir /root/release/${VERSION} --version ${VERSION} -d /root/fleet.yaml`)
    await fleetkit(a, `seed ${NODE_ID} --kind agent -d /root/fleet.yaml --output /root/${NODE_ID}.user-data`)
    const userData = (await a.sshOk(`cat /root/${NODE_ID}.user-data`)).stdout
    const [started] = await startContainerHosts(1, { name: 'agent', seed: { userData } })
    agent = started!
    await heartbeatAfter(a, 0)

    // A change after the base backup besides the enrollment: the node held, with its event.
    await fleetkit(a, `node hold ${NODE_ID} --reason drill`)
    const before = (await fleetkitJson(a, 'db status')).archive as { lastArchivedWal: string }
    // The hold's segment is archived (the archive timeout switches it out), then shipped.
    const shipped = await eventually(
      'the segment holding the hold archived and shipped',
      async () => {
        const status = (await fleetkitJson(a, 'db status')).archive as { lastArchivedWal: string | null }
        if (!status.lastArchivedWal || status.lastArchivedWal <= before.lastArchivedWal) return undefined
        return { archived: status.lastArchivedWal, ship: await fleetkitJson(a, 'db archive ship') }
      },
      120_000,
    )
    assert.ok((shipped.ship.lastShippedWal as string) >= shipped.archived, JSON.stringify(shipped))
    const verified = await fleetkitJson(a, 'db archive verify --remote')
    assert.ok(verified, 'the remote copy verifies')
  })

  it('A is destroyed; C takes its address, fetches and restores the archive, installs the gateway', async () => {
    const certBefore = (await agent!.sshOk(`sha256sum ${AGENT_CERT}`)).stdout.split(' ')[0]
    await control!.stop()
    control = undefined
    const c = replacement
    // The floating address moves to the new machine (as a provider's floating IP is reassigned).
    await c.sshOk(`ip addr add ${floating}/${PREFIX_LENGTH} dev host0`)
    // The runbook (docs/state.md, "Replacing the control host"), steps 2-5.
    const key = '/etc/fleetkit/archive_ed25519'
    await c.sshOk('mkdir -p /etc/fleetkit')
    await authorizeOnVault(c, key)
    const pinned = `--host-key '${vault.knownHostsLine}' --identity ${key}`
    await fleetkit(c, `db archive fetch ${remoteUrl} ${ARCHIVE_DIR} ${pinned}`)
    const restored = await fleetkitJson(c, `db restore --to latest --archive ${ARCHIVE_DIR}`)
    assert.ok(restored.replayedLsn, JSON.stringify(restored))
    await fleetkit(c, `db archive enable ${ARCHIVE_DIR} --archive-timeout 30`)
    await fleetkit(c, `db archive remote add ${remoteUrl} ${pinned}`)
    // Step 5's gateway.env came with the kit: A's binds, where the unit reads them.
    assert.equal(
      (await c.sshOk('cat /etc/fleetkit/gateway.env')).stdout,
      'FLEETKIT_ENROLL_BIND=0.0.0.0:8444\nFLEETKIT_AGENT_BIND=0.0.0.0:8443\n',
    )
    await fleetkit(c, 'db stop')
    const installed = await fleetkitJson(c, 'gateway install')
    assert.equal(installed.archiveShipTimerPath, '/etc/systemd/system/fleetkit-archive-ship.timer')
    // The install gave the account the archive and the key the shipping timer logs in with.
    assert.equal((await c.sshOk(`stat -c %U ${ARCHIVE_DIR} ${key} | sort -u`)).stdout.trim(), 'fleetkit-gateway')

    // The state is all there: the node enrolled and held after the base backup, with their events.
    const shown = (await fleetkitJson(c, `node show ${NODE_ID}`)) as { node: { status: string; hold: unknown } }
    // Active, or unhealthy when C's sweep ran before the agent's first heartbeat reached it (the restored
    // last_seen_at is as old as the outage); the heartbeat below brings it back to active either way.
    assert.ok(['active', 'unhealthy'].includes(shown.node.status), shown.node.status)
    assert.ok(shown.node.hold, 'the hold made after the base backup')
    const events = async (type: string) =>
      ((await fleetkitJson(c, `events --type ${type}`)) as { events: unknown[] }).events.length
    assert.equal(await events('node_enrolled'), 1)
    assert.equal(await events('node_held'), 1)
    assert.equal(await events('gateway_installed'), 2, "A's install and C's")

    // The agent's next heartbeats land on C's gateway, with the certificate A's CA issued it.
    await heartbeatAfter(c, await clockOf(c))
    assert.equal(await events('node_enrolled'), 1, 'no new enrollment')
    const certAfter = (await agent!.sshOk(`sha256sum ${AGENT_CERT}`)).stdout.split(' ')[0]
    assert.equal(certAfter, certBefore, 'the agent kept its certificate')

    // C's shipping timer's service, as the gateway's account, ships the new timeline beside the old one.
    await c.sshOk('systemctl start fleetkit-archive-ship.service', { timeoutMs: 300_000 })
    assert.equal((await c.ssh('systemctl show -P Result fleetkit-archive-ship.service')).stdout.trim(), 'success')
    const shipping = ((await fleetkitJson(c, 'db status')).archive as { shipping: Record<string, unknown> }).shipping
    assert.equal(shipping.lastError, null, JSON.stringify(shipping))
    assert.match(String(shipping.lastShippedWal), /^00000002/, 'the new timeline shipped')
    assert.equal(
      (await c.sshOk('stat -c %U:%a /var/lib/fleetkit/postgres/archive-ship.json')).stdout.trim(),
      'fleetkit-gateway:640',
    )
  })
})
