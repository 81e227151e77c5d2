// The Hetzner stub driven by Hetzner's own CLI (`hcloud`, Debian's hcloud-cli, built on hcloud-go):
// what fleetkit uses of the API, listed, created, applied and deleted as the API's own client does it,
// each step judged by what the CLI printed or its exit status. scripts/install-test-deps installs it.
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { systemClock } from '../../../src/config/clock.js'
import { type HetznerStub, startHetznerStub } from '../../../src/provider/hetzner-stub.js'
import { overlayEnv, type ProcessResult, runProcess } from '../../support/process.js'

/** A public key only (its private half was never kept): the stub and the CLI read it as text. */
const PUBLIC_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILRu9r3KoSSeIdtdT4hsjwnAugG6lxXlALNjPEyrpo2A ops'
const USER_DATA = '#cloud-config\nruncmd:\n  - [touch, /run/fleetkit-seeded]\n'

describe('the Hetzner stub driven by Hetzner’s own CLI (hcloud)', function () {
  this.timeout(120_000)
  let stub: HetznerStub
  let dir: string

  before(async function () {
    const found = await runProcess('sh', ['-c', 'command -v hcloud']).catch(() => undefined)
    // Never skipped: a missing CLI fails here, with what installs it.
    assert.equal(found?.code, 0, "hcloud is not installed: scripts/install-test-deps installs Debian's hcloud-cli")
    // The system clock: hcloud polls the create's action on its own and must see it finish.
    stub = await startHetznerStub({ clock: systemClock, actionDurationMs: 300 })
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-hcloud-'))
    await writeFile(join(dir, 'cli.toml'), '')
    await writeFile(join(dir, 'key.pub'), `${PUBLIC_KEY}\n`)
    await writeFile(join(dir, 'user-data.yaml'), USER_DATA)
    // hcloud 1.30 reads only source_ips from a rules file: the outbound rule is added with add-rule.
    const rules = [{ direction: 'in', protocol: 'tcp', port: '22', source_ips: ['192.0.2.0/24'], description: 'ssh' }]
    await writeFile(join(dir, 'rules.json'), JSON.stringify(rules))
  })
  after(async () => {
    await stub?.close()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  /** Runs `hcloud ARGS` against the stub, with a config file of its own (never the user's). */
  function hcloud(...args: string[]): Promise<ProcessResult> {
    return runProcess('hcloud', args, {
      cwd: dir,
      timeoutMs: 60_000,
      env: overlayEnv({ HCLOUD_CONFIG: join(dir, 'cli.toml'), HCLOUD_ENDPOINT: stub.url, HCLOUD_TOKEN: stub.token }),
    })
  }

  /** `hcloud ARGS -o json`, parsed; it prints `null` for an empty list. */
  async function json<T = Record<string, unknown>>(...args: string[]): Promise<T> {
    const result = await hcloud(...args, '-o', 'json')
    assert.equal(result.code, 0, `hcloud ${args.join(' ')}: ${result.stderr}`)
    return JSON.parse(result.stdout) as T
  }

  async function ok(pattern: RegExp, ...args: string[]): Promise<string> {
    const result = await hcloud(...args)
    assert.equal(result.code, 0, `hcloud ${args.join(' ')}: ${result.stderr}`)
    assert.match(result.stdout, pattern)
    return result.stdout
  }

  const names = (items: { name: string }[] | null) => (items ?? []).map((i) => i.name)

  it('lists every resource fleetkit uses', async () => {
    assert.ok(names(await json<{ name: string }[]>('server-type', 'list')).includes('cx22'))
    assert.ok(names(await json<{ name: string }[]>('image', 'list', '--type', 'system')).includes('debian-12'))
    assert.ok(names(await json<{ name: string }[]>('location', 'list')).includes('fsn1'))
    assert.ok(names(await json<{ name: string }[]>('datacenter', 'list')).includes('fsn1-dc14'))
    for (const resource of ['server', 'volume', 'firewall', 'placement-group', 'ssh-key']) {
      assert.deepEqual(names(await json<{ name: string }[]>(resource, 'list')), [], `${resource}: none yet`)
    }
  })

  it('creates an SSH key, a server with labels, user data and the key (waiting for it), and finds it by label', async () => {
    await ok(/^SSH key \d+ created$/m, 'ssh-key', 'create', '--name', 'ops', '--public-key-from-file', 'key.pub')
    const [key] = await json<{ id: number; name: string }[]>('ssh-key', 'list')
    assert.equal(key?.name, 'ops')

    const printed = await ok(
      /^Server \d+ created$/m,
      ...['server', 'create', '--name', 'web-1', '--type', 'cx22', '--image', 'debian-12', '--location', 'fsn1'],
      ...['--label', 'role=web', '--label', 'fleetkit.node_id=web-1', '--user-data-from-file', 'user-data.yaml'],
      ...['--ssh-key', 'ops'],
    )
    assert.match(printed, /Waiting for server \d+ to have started .*done/)
    assert.match(printed, /^IPv4: 198\.18\.\d+\.\d+$/m)
    const request = stub.requests.find((r) => r.method === 'POST' && r.path === '/servers')!
    const body = request.body as { user_data: string; labels: Record<string, string>; ssh_keys: number[] }
    assert.equal(body.user_data, USER_DATA)
    assert.deepEqual(body.labels, { role: 'web', 'fleetkit.node_id': 'web-1' })
    assert.deepEqual(body.ssh_keys, [key!.id])

    const server = await json<{ status: string; public_net: { ipv4: { ip: string } } }>('server', 'describe', 'web-1')
    assert.equal(server.status, 'running', 'the CLI waited for the create action')
    const byLabel = await json<{ name: string }[]>('server', 'list', '-l', 'role=web')
    assert.deepEqual(names(byLabel), ['web-1'])
    assert.deepEqual(names(await json<{ name: string }[]>('server', 'list', '-l', 'role=db')), [])
  })

  it('creates a volume and attaches it to the server', async () => {
    await ok(/^Volume \d+ created$/m, 'volume', 'create', '--name', 'data-1', '--size', '10', '--location', 'fsn1')
    await ok(/^Volume \d+ attached to server web-1$/m, 'volume', 'attach', '--server', 'web-1', 'data-1')
    const server = await json<{ id: number; volumes: number[] }>('server', 'describe', 'web-1')
    const volume = await json<{ id: number; server: number }>('volume', 'describe', 'data-1')
    assert.equal(volume.server, server.id)
    assert.deepEqual(server.volumes, [volume.id])
  })

  it('creates a firewall with rules, adds one (set_rules) and applies it to the server', async () => {
    await ok(/^Firewall \d+ created$/m, 'firewall', 'create', '--name', 'fw-web', '--rules-file', 'rules.json')
    await ok(
      /^Firewall Rules for Firewall \d+ updated$/m,
      ...['firewall', 'add-rule', 'fw-web', '--direction', 'out', '--protocol', 'udp', '--port', '53'],
      ...['--destination-ips', '198.51.100.53/32', '--description', 'dns'],
    )
    await ok(
      /^Firewall \d+ applied$/m,
      'firewall',
      'apply-to-resource',
      'fw-web',
      '--type',
      'server',
      '--server',
      'web-1',
    )
    // describe -o json prints the API's object as it came: every field of every rule.
    const firewall = await json<{ id: number; created: string; rules: unknown[] }>('firewall', 'describe', 'fw-web')
    assert.deepEqual(firewall.rules, [
      {
        direction: 'in',
        source_ips: ['192.0.2.0/24'],
        destination_ips: [],
        protocol: 'tcp',
        port: '22',
        description: 'ssh',
      },
      {
        direction: 'out',
        source_ips: [],
        destination_ips: ['198.51.100.53/32'],
        protocol: 'udp',
        port: '53',
        description: 'dns',
      },
    ])
    assert.ok(!Number.isNaN(Date.parse(firewall.created)))
    const server = await json<{ public_net: { firewalls: { id: number }[] } }>('server', 'describe', 'web-1')
    assert.deepEqual(
      server.public_net.firewalls.map((f) => f.id),
      [firewall.id],
    )
  })

  it('refuses a taken name with the API’s uniqueness_error', async () => {
    const taken = await hcloud('server', 'create', '--name', 'web-1', '--type', 'cx22', '--image', 'debian-12')
    assert.notEqual(taken.code, 0)
    assert.match(taken.stderr, /uniqueness_error/)
    assert.equal((await json<{ name: string }[]>('server', 'list')).length, 1)
  })

  it('deletes the server', async () => {
    await ok(/^Server web-1 deleted$/m, 'server', 'delete', 'web-1')
    assert.deepEqual(names(await json<{ name: string }[]>('server', 'list')), [])
    const volume = await json<{ server: number | null }>('volume', 'describe', 'data-1')
    assert.equal(volume.server, null, 'the volume is kept, detached')
  })
})
