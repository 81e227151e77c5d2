// `fleetkit gateway install` on a real control host: a systemd-nspawn container (systemd as PID 1)
// with this build of fleetkit and this machine's Node.js copied in. Root's state is taken over, the
// unit runs the gateway and its embedded PostgreSQL as fleetkit-gateway, root and a member of the
// group see one database, a reboot brings both back, uninstall stops and removes the unit.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

import { type ContainerHost, assertHostsAvailable, startContainerHosts } from '../../hosts/index.js'
import { runProcessOk } from '../../support/process.js'

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url))
const FLEETKIT = '/usr/local/bin/fleetkit'
/** What `npm install -g` would put in place: the build, its manifest, the shipped files and the dependencies. */
const PACKAGE_FILES = [
  'bin',
  'dist',
  'package.json',
  'oclif.manifest.json',
  'systemd',
  'schema',
  'policy',
  'src/store/migrations',
  'src/store/embedded/initdb-child.mjs',
  'node_modules',
]

async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 1000))
  }
}

describe('gateway install on a control host (container)', function () {
  this.timeout(600_000)
  let host: ContainerHost

  before(async function () {
    assert.ok(existsSync(`${repoRoot}/dist/commands`), 'fleetkit is not built: npm run build')
    await assertHostsAvailable('container')
    const [started] = await startContainerHosts(1, { name: 'control' })
    host = started!
    // The image's Node.js is Debian's 18; fleetkit needs 20: this machine's goes to /usr/local/bin.
    // Copied into the container's own mount namespace and root (nsenter -m -r), not over its overlay.
    const into = `nsenter -t ${host.initPid} -m -r --`
    await runProcessOk('bash', [
      '-o',
      'pipefail',
      '-c',
      `${into} mkdir -p /opt/fleetkit /usr/local/bin && ` +
        `tar -C ${repoRoot} -chf - ${PACKAGE_FILES.join(' ')} | ${into} tar -xf - -C /opt/fleetkit --no-same-owner && ` +
        `tar -C "$(dirname "$(readlink -f "$(command -v node)")")" -chf - node | ${into} tar -xf - -C /usr/local/bin --no-same-owner`,
    ])
    await host.sshOk(
      `chmod -R a+rX /opt/fleetkit && printf '#!/bin/sh\\nexec /usr/local/bin/node /opt/fleetkit/bin/run.js "$@"\\n' > ${FLEETKIT} && chmod 0755 ${FLEETKIT}`,
    )
    await host.sshOk('useradd --create-home --shell /bin/bash op')
  })
  after(() => host?.stop())

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
    await host.sshOk(`${FLEETKIT} ca init --server-name localhost`, { timeoutMs: 180_000 })
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
