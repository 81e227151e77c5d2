// `fleetkit provider stub --boot`'s local cloud, for real: the stub's API with a LocalCloud behind it boots a
// server created through the API as a systemd-nspawn machine from a Debian image (the test hosts' cached golden
// rootfs stands in for the images the product builds, so no build is paid here), its gzip+base64 user_data
// run by cloud-init, its root login with the request's SSH key at the address the API reports on the stub's
// bridge; a volume is a block device the machine sees, attached and detached with the API's actions;
// reboot, poweroff, poweron and delete act on the machine; and closing the stub leaves no machine, loop
// device, folder or bridge behind.
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'

import { spawn } from 'node:child_process'
import { mkdir, symlink } from 'node:fs/promises'
import { createInterface } from 'node:readline'

import { startHetznerStub, type HetznerStub } from '../../../src/provider/hetzner-stub.js'
import { debianMirror, imageKey } from '../../../src/provider/local-cloud/image-recipe.js'
import { LocalCloud } from '../../../src/provider/local-cloud/local-cloud.js'
import { fleetkitEntry } from '../../support/cli.js'
import { assertHostsAvailable, goldenImage } from '../../hosts/index.js'
import { generateKeyPair, knownHostsLine } from '../../hosts/keys.js'
import { sshRun, type SshTarget } from '../../hosts/ssh.js'
import { runProcess } from '../../support/process.js'
import { eventually } from '../../support/eventually.js'

/** Its own bridge and subnet: apart from the test hosts' fkhosts0 (10.231/16) and the stub's default (10.232/16). */
const BRIDGE = `fklc${process.pid.toString(36)}`.slice(0, 15)
const BRIDGE_ADDRESS = '10.233.0.1'

interface ApiAnswer {
  status: number
  body: Record<string, unknown>
}

describe('provider stub --boot: the local cloud (systemd-nspawn machines)', function () {
  this.timeout(600_000)
  let dir: string
  let cloud: LocalCloud
  let stub: HetznerStub
  let operatorKey: string
  let closed = false

  async function api(method: string, path: string, body?: unknown): Promise<ApiAnswer> {
    const response = await fetch(`${stub.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${stub.token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) }
  }

  /** Waits for the actions of an answer (action, next_actions) to end, and asserts they succeeded. */
  async function settle(answer: ApiAnswer): Promise<void> {
    const actions = [answer.body.action, ...((answer.body.next_actions as unknown[] | undefined) ?? [])].filter(
      Boolean,
    ) as { id: number }[]
    for (const { id } of actions) {
      const done = await eventually(
        `action ${id}`,
        async () => {
          const { action } = (await api('GET', `/actions/${id}`)).body as {
            action: { status: string; error: unknown }
          }
          return action.status === 'running' ? undefined : action
        },
        { timeoutMs: 120_000, intervalMs: 200 },
      )
      assert.equal(done.status, 'success', JSON.stringify(done))
    }
  }

  /** The server's target for ssh: the address the API reports, the host key its user_data pinned. */
  async function targetOf(serverId: number, hostPublicKey: string): Promise<SshTarget> {
    const { server } = (await api('GET', `/servers/${serverId}`)).body as {
      server: { public_net: { ipv4: { ip: string } } }
    }
    const address = server.public_net.ipv4.ip
    return {
      address,
      port: 22,
      knownHostsLine: knownHostsLine(address, 22, hostPublicKey),
      operator: { privateKeyFile: operatorKey },
      dir,
    }
  }

  async function createServer(name: string, image: string, userData: string) {
    const hostKey = await generateKeyPair(dir, `host-${name}`, `root@${name}`)
    const seed =
      `#cloud-config\n` +
      `ssh_deletekeys: true\nssh_genkeytypes: [ed25519]\n` +
      `ssh_keys:\n  ed25519_private: |\n${readFileSync(hostKey.privateKeyFile, 'utf8')
        .trim()
        .split('\n')
        .map((l) => `    ${l}`)
        .join('\n')}\n  ed25519_public: ${hostKey.publicKey}\n` +
      userData
    const created = await api('POST', '/servers', {
      name,
      server_type: 'cx22',
      image,
      location: 'fsn1',
      ssh_keys: ['operator'],
      // As fleetkit sends it: gzip, then base64.
      user_data: gzipSync(seed).toString('base64'),
      labels: { test: 'local-cloud' },
    })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    const server = created.body.server as { id: number; public_net: { ipv4: { ip: string } } }
    await settle(created)
    return { id: server.id, ip: server.public_net.ipv4.ip, target: await targetOf(server.id, hostKey.publicKey) }
  }

  const ssh = (target: SshTarget, command: string) => sshRun(target, command, { timeoutMs: 20_000 })
  const sshOut = async (target: SshTarget, command: string) => {
    const result = await ssh(target, command)
    assert.equal(result.code, 0, `${command}: ${result.stderr}`)
    return result.stdout.trim()
  }
  const sshUp = (target: SshTarget) =>
    eventually(`ssh to ${target.address}`, async () => (await ssh(target, 'true')).code === 0, {
      timeoutMs: 90_000,
      intervalMs: 500,
    })
  const bootId = (target: SshTarget) => sshOut(target, 'cat /proc/sys/kernel/random/boot_id')

  /** The nspawn processes of this process's machines (their machine names start fk<pid>). */
  const machineProcesses = () => machineProcessesWith(`--machine=fk${process.pid.toString(36)}`)

  before(async () => {
    await assertHostsAvailable('container')
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-local-cloud-test-'))
    operatorKey = (await generateKeyPair(dir, 'operator', 'local-cloud-operator')).privateKeyFile
    const [bookworm, trixie] = await Promise.all([goldenImage('bookworm'), goldenImage('trixie')])
    cloud = await LocalCloud.start({
      bridge: { name: BRIDGE, address: BRIDGE_ADDRESS, prefixLength: 24 },
      prebuiltImages: { 'debian-12': bookworm.rootfs, 'debian-13': trixie.rootfs },
    })
    stub = await startHetznerStub({ machines: cloud, actionDurationMs: 100 })
    const key = await api('POST', '/ssh_keys', {
      name: 'operator',
      public_key: readFileSync(`${operatorKey}.pub`, 'utf8'),
    })
    assert.equal(key.status, 201)
  })

  after(async () => {
    if (!closed) await stub?.close()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  let first: Awaited<ReturnType<typeof createServer>>
  let second: Awaited<ReturnType<typeof createServer>>

  it('boots a created server: its address on the bridge, its user_data run, root with the request key', async () => {
    first = await createServer('lc-bookworm', 'debian-12', 'runcmd:\n  - [sh, -c, "echo ran > /root/user-data-ran"]\n')
    assert.match(first.ip, /^10\.233\.0\.\d+$/)
    await sshUp(first.target)
    await eventually(
      'cloud-init done',
      async () => (await ssh(first.target, 'test -e /var/lib/cloud/instance/boot-finished')).code === 0,
      {
        timeoutMs: 120_000,
        intervalMs: 500,
      },
    )
    assert.equal(await sshOut(first.target, 'cat /root/user-data-ran'), 'ran')
    assert.equal(await sshOut(first.target, 'hostname'), 'lc-bookworm')
    assert.equal(await sshOut(first.target, 'systemd-detect-virt'), 'systemd-nspawn')
    assert.match(await sshOut(first.target, '. /etc/os-release; echo $VERSION_ID'), /^12$/)
  })

  it('boots Debian 13 beside it at the next address', async () => {
    second = await createServer('lc-trixie', 'debian-13', '')
    assert.notEqual(second.ip, first.ip)
    await sshUp(second.target)
    assert.match(await sshOut(second.target, '. /etc/os-release; echo $VERSION_ID'), /^13$/)
  })

  it('refuses an image it cannot boot, as invalid input', async () => {
    const refused = await api('POST', '/servers', { name: 'lc-ubuntu', server_type: 'cx22', image: 'ubuntu-24.04' })
    assert.equal(refused.status, 422)
    assert.equal((refused.body.error as { code: string }).code, 'invalid_input')
  })

  it('a volume is a block device the machine sees: attached, kept across a reboot, detached', async () => {
    const created = await api('POST', '/volumes', { name: 'lc-data', size: 10, server: first.id, format: 'ext4' })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    await settle(created)
    const volume = (await api('GET', `/volumes/${(created.body.volume as { id: number }).id}`)).body.volume as {
      id: number
      server: number
      linux_device: string
    }
    assert.equal(volume.server, first.id)
    assert.equal(
      await sshOut(first.target, `test -b ${volume.linux_device} && blkid -o value -s TYPE ${volume.linux_device}`),
      'ext4',
    )
    assert.equal(cloud.loopDevices().length, 1)

    const before = await bootId(first.target)
    await settle(await api('POST', `/servers/${first.id}/actions/reboot`))
    await sshUp(first.target)
    assert.notEqual(await bootId(first.target), before, 'a new boot')
    assert.equal(await sshOut(first.target, `blkid -o value -s TYPE ${volume.linux_device}`), 'ext4')

    await settle(await api('POST', `/volumes/${volume.id}/actions/detach`))
    assert.notEqual((await ssh(first.target, `test -e ${volume.linux_device}`)).code, 0)
    await settle(await api('POST', `/volumes/${volume.id}/actions/attach`, { server: first.id }))
    assert.equal(await sshOut(first.target, `blkid -o value -s TYPE ${volume.linux_device}`), 'ext4')
    await settle(await api('POST', `/volumes/${volume.id}/actions/detach`))
    assert.equal((await api('DELETE', `/volumes/${volume.id}`)).status, 204)
    await eventually('the loop device detached', () => cloud.loopDevices().length === 0)
  })

  it('poweroff stops the machine, poweron boots it again', async () => {
    await settle(await api('POST', `/servers/${first.id}/actions/poweroff`))
    const { server } = (await api('GET', `/servers/${first.id}`)).body as { server: { status: string } }
    assert.equal(server.status, 'off')
    assert.notEqual((await ssh(first.target, 'true')).code, 0)
    await settle(await api('POST', `/servers/${first.id}/actions/poweron`))
    await sshUp(first.target)
  })

  it('delete stops the machine once; closing the stub leaves nothing behind', async () => {
    const deleted = await api('DELETE', `/servers/${first.id}`)
    assert.equal(deleted.status, 200)
    await settle(deleted)
    assert.equal(cloud.events.filter((e) => e.serverId === first.id && e.event === 'delete').length, 1)
    assert.notEqual((await ssh(first.target, 'true')).code, 0)
    assert.equal(machineProcesses().length > 0, true, 'the second machine still runs')

    closed = true
    await stub.close()
    assert.deepEqual(machineProcesses(), [])
    assert.notEqual((await runProcess('ip', ['link', 'show', BRIDGE])).code, 0, 'the bridge is gone')
    const loops = (await runProcess('losetup', ['--list', '--noheadings', '-O', 'BACK-FILE'])).stdout
    assert.doesNotMatch(loops, /fleetkit-local-cloud-/)
    assert.equal(existsSync(cloud.dir), false, 'the run folder is gone')
  })
})

describe('fleetkit provider stub --boot: the command', function () {
  this.timeout(600_000)

  it('boots a server, and Ctrl-C stops it and removes its loop device and the bridge', async () => {
    await assertHostsAvailable('container')
    const dir = await mkdtemp(join(tmpdir(), 'fleetkit-local-cloud-command-'))
    let stub: ReturnType<typeof spawn> | undefined
    try {
      // The cache holds Debian 12's image already (the test hosts' golden rootfs under the key the command
      // looks for), so the command builds nothing: the build itself is debootstrap's, run by hand (docs/provider.md).
      const cache = join(dir, 'cache')
      await mkdir(cache)
      const bookworm = await goldenImage('bookworm')
      await symlink(bookworm.rootfs, join(cache, `debian-12-${imageKey('bookworm', debianMirror())}`))
      const child = spawn(process.execPath, [fleetkitEntry(), 'provider', 'stub', '--boot', '--json'], {
        env: { ...process.env, FLEETKIT_LOCAL_CLOUD_CACHE: cache },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      stub = child
      let stderr = ''
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
      const lines = createInterface({ input: child.stdout })
      const first = await new Promise<string>((resolve, reject) => {
        lines.once('line', resolve)
        void exited.then((code) => reject(new Error(`the stub exited ${code}: ${stderr}`)))
      })
      const startup = (
        JSON.parse(first) as { result: { url: string; token: string; bridge: { name: string; address: string } } }
      ).result
      assert.deepEqual(startup.bridge, { name: 'fkcloud0', address: '10.232.0.1' })
      const call = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`${startup.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${startup.token}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        })
        // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON read field by field; the asserts check its shape
        return (await response.json()) as Record<string, any>
      }
      const created = await call('POST', '/servers', { name: 'cmd-1', server_type: 'cx22', image: 'debian-12' })
      assert.match(created.server.public_net.ipv4.ip, /^10\.232\.0\.\d+$/)
      await call('POST', '/volumes', { name: 'cmd-data', size: 10, server: created.server.id })
      await eventually(
        'the server booted',
        async () => (await call('GET', `/actions/${created.action.id}`)).action.status === 'success',
        { timeoutMs: 120_000, intervalMs: 250 },
      )
      const prefix = `--machine=fk${child.pid!.toString(36)}`
      assert.equal(machineProcessesWith(prefix).length > 0, true, 'the machine runs')

      child.kill('SIGINT')
      assert.equal(await exited, 130, stderr)
      assert.deepEqual(machineProcessesWith(prefix), [])
      assert.notEqual((await runProcess('ip', ['link', 'show', 'fkcloud0'])).code, 0, 'the bridge is gone')
      const loops = (await runProcess('losetup', ['--list', '--noheadings', '-O', 'BACK-FILE'])).stdout
      assert.doesNotMatch(loops, /fleetkit-local-cloud-/)
    } finally {
      // A failed assertion must not leave the stub, its machine and the bridge to the tests after it.
      if (stub && stub.exitCode === null && stub.signalCode === null) {
        const gone = new Promise((resolve) => stub!.once('exit', resolve))
        stub.kill('SIGINT')
        await gone
      }
      await rm(dir, { recursive: true, force: true })
    }
  })
})

/** The processes whose command line has an argument starting with PREFIX (nspawn's --machine=NAME). */
function machineProcessesWith(prefix: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8')
          .split('\0')
          .some((arg) => arg.startsWith(prefix))
      } catch {
        return false
      }
    })
    .map(Number)
}
