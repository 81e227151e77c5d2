// fleetkit seed, node token and inventory, run for real (the CLI entry of test/support/cli.ts) against a real
// PostgreSQL; every --json output is validated against its schema.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { parse, stringify } from 'yaml'

import { packagePath } from '../../../src/package-root.js'
import { assertMatchesOutputSchema, type CliRun, fleetkitEntry, runFleetkit } from '../../support/cli.js'
import {
  type DisposablePostgres,
  type FreshDatabase,
  freshDatabase,
  startDisposablePostgres,
} from '../../support/postgres.js'
import { overlayEnv, runProcess, runProcessOk } from '../../support/process.js'
import { agentSeedScriptOf } from '../../support/agent-seed-script.js'

interface Ran extends CliRun {
  exitCode: number
  json: { status: number; code?: string; result?: Record<string, unknown>; data?: Record<string, unknown> }
}

const EXAMPLE = ['--definition', 'examples/fleet.yaml']

describe('fleetkit seed | node token | inventory (real PostgreSQL)', function () {
  this.timeout(180_000)
  let server: DisposablePostgres
  let db: FreshDatabase
  let dir: string
  let env: Record<string, string>

  /** Runs the real command with --json and asserts what it printed matches schema/output/SCHEMA.schema.json. */
  async function fleetkit(schema: string, args: string[], extraEnv: Record<string, string> = {}): Promise<Ran> {
    const ran = await runFleetkit([...args, '--json'], { env: { ...env, ...extraEnv } })
    assertMatchesOutputSchema(schema, ran.json)
    return { ...ran, exitCode: ran.code }
  }

  async function row(id: string): Promise<Record<string, unknown> | undefined> {
    const result = await db.pool.query(
      'SELECT status, enrollment_secret_sha256, enrollment_secret_expires_at, host_key_public FROM nodes WHERE id = $1',
      [id],
    )
    return result.rows[0] as Record<string, unknown> | undefined
  }

  before(async () => {
    server = await startDisposablePostgres()
    db = await freshDatabase(server.url)
    dir = mkdtempSync(join(tmpdir(), 'fleetkit-render-cli-'))
    mkdirSync(join(dir, 'pki'), { mode: 0o700 })
    copyFileSync(
      packagePath('test', 'fixtures', 'cloud-init', 'gateway-ca-bundle.pem'),
      join(dir, 'pki', 'ca-bundle.pem'),
    )
    env = { DATABASE_URL: db.url, FLEETKIT_PKI_DIR: join(dir, 'pki'), FLEETKIT_STATE_DIR: join(dir, 'state') }
  })

  after(async () => {
    await db?.drop()
    await server?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it("seed --kind agent writes a 0600 seed, registers the node as provisioning with only the secret's SHA-256 and its new host key", async () => {
    const output = join(dir, 'build-1.user-data')
    const ran = await fleetkit('seed', [
      'seed',
      'build-1',
      '--kind',
      'agent',
      '--rekey',
      ...EXAMPLE,
      '--output',
      output,
    ])
    assert.equal(ran.exitCode, 0, ran.stderr)
    const result = ran.json.result!
    assert.equal(result.path, output)
    assert.equal(result.gzipped, false)
    assert.equal(statSync(output).mode & 0o777, 0o600)
    const seed = readFileSync(output, 'utf8')
    assert.equal(result.bytes, Buffer.byteLength(seed))
    await runProcessOk(packagePath('scripts', 'cloud-init-schema'), [output])
    const script = agentSeedScriptOf(seed)
    const secret = /<<'FLEETKIT_ENROLLMENT_SECRET'\n([0-9a-f]{64})\n/.exec(script)?.[1]
    assert.ok(secret, 'the seed holds a 64-hex secret')
    assert.ok(!ran.stdout.includes(secret) && !ran.stderr.includes(secret), 'the secret is not in the --json output')
    const stored = await row('build-1')
    assert.equal(stored?.status, 'provisioning')
    assert.deepEqual(stored?.enrollment_secret_sha256, createHash('sha256').update(secret).digest())
    assert.equal((stored?.enrollment_secret_expires_at as Date).toISOString(), result.secretExpiresAt)
    // build-1 declares ssh.user: the agent seed pinned a new host key (--rekey: fleet.yaml has one).
    assert.equal(stored?.host_key_public, result.hostKeyPublic)
    assert.equal(result.rekeyed, true)
    const scriptFile = `${output}.sh`
    writeFileSync(scriptFile, script)
    await runProcessOk('shellcheck', ['-s', 'bash', scriptFile])
  })

  it('seed refuses a bad --ttl, a missing CA bundle and an unknown node, each with its code', async () => {
    const ttl = await fleetkit('seed', [
      'seed',
      'build-1',
      '--kind',
      'agent',
      '--rekey',
      ...EXAMPLE,
      '--ttl',
      '25h',
      '--output',
      join(dir, 'x'),
    ])
    assert.equal(ttl.json.code, 'SEED_TTL_INVALID')
    assert.equal(ttl.exitCode, 2)
    const ca = await fleetkit(
      'seed',
      ['seed', 'build-1', '--kind', 'agent', '--rekey', ...EXAMPLE, '--output', join(dir, 'x')],
      {
        FLEETKIT_PKI_DIR: join(dir, 'no-pki'),
      },
    )
    assert.equal(ca.json.code, 'CA_MISSING')
    const unknown = await fleetkit('seed', [
      'seed',
      'nope-1',
      '--kind',
      'agent',
      '--rekey',
      ...EXAMPLE,
      '--output',
      join(dir, 'x'),
    ])
    assert.equal(unknown.json.code, 'NODE_UNKNOWN')
    assert.ok(!existsSync(join(dir, 'x')))
  })

  it('seed --kind worker refuses to replace a declared host key (HOST_KEY_PINNED); --rekey pins a new one that passes cloud-init schema', async () => {
    const refused = await fleetkit('seed', [
      'seed',
      'app-1',
      '--kind',
      'worker',
      ...EXAMPLE,
      '--output',
      join(dir, 'app-1-refused.yaml'),
    ])
    assert.equal(refused.json.code, 'HOST_KEY_PINNED')
    assert.ok(!existsSync(join(dir, 'app-1-refused.yaml')), 'nothing written')
    assert.equal(await row('app-1'), undefined, 'nothing registered')
    for (const autoinstall of [false, true]) {
      const output = join(dir, `app-1-${autoinstall}.yaml`)
      const ran = await fleetkit('seed', [
        'seed',
        'app-1',
        '--kind',
        'worker',
        '--rekey',
        '--yes',
        ...EXAMPLE,
        '--output',
        output,
        ...(autoinstall ? ['--autoinstall'] : []),
      ])
      assert.equal(ran.exitCode, 0, ran.stderr)
      assert.equal(ran.json.result?.rekeyed, true)
      assert.equal(statSync(output).mode & 0o777, 0o600)
      const text = readFileSync(output, 'utf8')
      const doc = parse(text) as Record<string, unknown>
      const config = (autoinstall ? (doc.autoinstall as Record<string, unknown>)['user-data'] : doc) as {
        ssh_keys: { ed25519_private: string }
      }
      const keyFile = join(dir, 'host-key')
      writeFileSync(keyFile, config.ssh_keys.ed25519_private, { mode: 0o600 })
      const derived = (await runProcessOk('ssh-keygen', ['-y', '-f', keyFile])).stdout.trim()
      assert.equal(derived, ran.json.result?.hostKeyPublic)
      assert.equal((await row('app-1'))?.host_key_public, derived)
      assert.ok(!ran.stdout.includes('PRIVATE KEY'))
      await runProcessOk(packagePath('scripts', 'cloud-init-schema'), [output])
    }
    const replaced = await db.pool.query(
      "SELECT data FROM events WHERE node_id = 'app-1' AND kind = 'host_key_replaced' ORDER BY id",
    )
    assert.equal(replaced.rowCount, 2, 'each rekey is an event')
    // Human mode prints the line to put into fleet.yaml; the state key now pins the host.
    const human = await runFleetkit(
      ['seed', 'app-1', '--kind', 'worker', '--rekey', '--yes', ...EXAMPLE, '--output', join(dir, 'app-1-human.yaml')],
      { env },
    )
    assert.equal(human.code, 0, human.stderr)
    assert.ok(
      human.stdout.split('\n').includes(`  hostKey: ${(await row('app-1'))?.host_key_public as string}`),
      human.stdout,
    )
    const pinned = await fleetkit('seed', [
      'seed',
      'app-1',
      '--kind',
      'worker',
      ...EXAMPLE,
      '--output',
      join(dir, 'app-1-again.yaml'),
    ])
    assert.equal(pinned.json.code, 'HOST_KEY_PINNED')
  })

  it('a host key only the state pins: HOST_KEY_PINNED and --rekey say nothing is copied into fleet.yaml', async () => {
    // db-1 renamed db-9 (the tests below want db-1 unregistered) and declared as a provisioned node is:
    // no hostKey in fleet.yaml, the state pins its key.
    const fleet = parse(readFileSync(packagePath('examples', 'fleet.yaml'), 'utf8')) as { nodes: { id: string }[] }
    for (const node of fleet.nodes)
      if (node.id === 'db-1') {
        node.id = 'db-9'
        delete (node as { hostKey?: string }).hostKey
      }
    const file = join(dir, 'no-host-key.yaml')
    writeFileSync(file, stringify(fleet))
    const seed = (name: string, ...more: string[]) =>
      runFleetkit(['seed', 'db-9', '--kind', 'worker', ...more, '--definition', file, '--output', join(dir, name)], {
        env,
      })
    try {
      await hostKeyOnlyInState(seed)
    } finally {
      // The tests below read the state's nodes against examples/fleet.yaml, which has no db-9.
      await db.pool.query(`DELETE FROM events WHERE node_id = 'db-9'`)
      await db.pool.query(`DELETE FROM nodes WHERE id = 'db-9'`)
    }
  })

  async function hostKeyOnlyInState(seed: (name: string, ...more: string[]) => ReturnType<typeof runFleetkit>) {
    const first = await seed('db-9-first.yaml')
    assert.equal(first.code, 0, first.stderr)
    const refused = await seed('db-9-refused.yaml', '--json')
    assert.equal(refused.json.code, 'HOST_KEY_PINNED')
    assert.match(
      refused.json.actions[0],
      // The --definition given is repeated (src/cli/context-flags.ts).
      /^fleetkit seed --definition \S+ db-9 --kind worker --rekey .*nothing to copy into fleet\.yaml/,
    )
    const rekeyed = await seed('db-9-rekeyed.yaml', '--rekey', '--yes')
    assert.equal(rekeyed.code, 0, rekeyed.stderr)
    assert.ok(!rekeyed.stdout.includes('hostKey:'), rekeyed.stdout)
    assert.match(rekeyed.stdout, /New host key, pinned in the state, .*nothing to copy into fleet\.yaml/)
    // Where fleet.yaml pins one, the refusal says the printed key goes there (app-1 above prints it).
    const declared = await runFleetkit(
      ['seed', 'app-1', '--kind', 'worker', ...EXAMPLE, '--output', join(dir, 'app-1-declared.yaml'), '--json'],
      { env },
    )
    assert.equal(declared.json.code, 'HOST_KEY_PINNED')
    assert.match(declared.json.actions[0], /put the printed hostKey into fleet\.yaml/)
  }

  it('seed --kind worker configures sshd on the declared ssh.port (app-2: 2222) and passes cloud-init schema', async () => {
    const output = join(dir, 'app-2.yaml')
    const ran = await fleetkit('seed', [
      'seed',
      'app-2',
      '--kind',
      'worker',
      '--rekey',
      '--yes',
      ...EXAMPLE,
      '--output',
      output,
    ])
    assert.equal(ran.exitCode, 0, ran.stderr)
    const doc = parse(readFileSync(output, 'utf8')) as { write_files: { path: string; content: string }[] }
    assert.deepEqual(
      doc.write_files.map((f) => [f.path, f.content.split('\n')[1]]),
      [['/etc/ssh/sshd_config.d/10-fleetkit-port.conf', 'Port 2222']],
    )
    await runProcessOk(packagePath('scripts', 'cloud-init-schema'), [output])
  })

  it('seed --output - writes to a pipe but refuses a terminal (SEED_STDOUT_TTY)', async () => {
    const { stdout } = await runProcessOk(
      process.execPath,
      [fleetkitEntry(), 'seed', 'build-2', '--kind', 'agent', '--rekey', ...EXAMPLE, '--output', '-'],
      { cwd: packagePath(), env: overlayEnv(env) },
    )
    assert.ok(stdout.startsWith('#cloud-config\n'))
    const command = [
      process.execPath,
      fleetkitEntry(),
      'seed',
      'build-2',
      '--kind',
      'agent',
      '--rekey',
      ...EXAMPLE,
      '--output',
      '-',
    ].join(' ')
    const onTerminal = await runProcess('script', ['-qec', command, '/dev/null'], {
      cwd: packagePath(),
      env: overlayEnv(env),
    })
    const out = onTerminal.code === 0 ? '' : onTerminal.stdout
    assert.match(out, /SEED_STDOUT_TTY/)
    assert.doesNotMatch(out, /FLEETKIT_ENROLLMENT_SECRET/)
  })

  it('node token prints a fresh secret once; a pending one is replaced only with --reissue', async () => {
    // build-1's seed above left its secret pending: this token replaces it on purpose.
    const first = await fleetkit('node-token', [
      'node',
      'token',
      'build-1',
      '--reissue',
      '--yes',
      ...EXAMPLE,
      '--ttl',
      '1h',
    ])
    assert.equal(first.exitCode, 0, first.stderr)
    const secret = first.json.result?.secret as string
    assert.deepEqual((await row('build-1'))?.enrollment_secret_sha256, createHash('sha256').update(secret).digest())
    const refused = await fleetkit('node-token', ['node', 'token', 'build-1', ...EXAMPLE])
    assert.equal(refused.json.code, 'NODE_SECRET_PENDING', refused.stdout)
    assert.deepEqual(
      (await row('build-1'))?.enrollment_secret_sha256,
      createHash('sha256').update(secret).digest(),
      'the pending secret is kept',
    )
    const second = await fleetkit('node-token', ['node', 'token', 'build-1', '--reissue', '--yes', ...EXAMPLE])
    assert.equal(second.exitCode, 0, second.stderr)
    assert.notEqual(second.json.result?.secret, secret)
    assert.deepEqual(
      (await row('build-1'))?.enrollment_secret_sha256,
      createHash('sha256')
        .update(second.json.result?.secret as string)
        .digest(),
    )
    const declared = await fleetkit('node-token', ['node', 'token', 'db-1', ...EXAMPLE])
    assert.equal(declared.json.result?.registered, true)
    assert.equal((await row('db-1'))?.status, 'provisioning')
    const bad = await fleetkit('node-token', ['node', 'token', 'build-1', ...EXAMPLE, '--ttl', '0m'])
    assert.equal(bad.json.code, 'SEED_TTL_INVALID')
  })

  it('inventory refuses a state host key that disagrees with fleet.yaml (HOST_KEY_DISAGREES), and pins it once fleet.yaml says so', async () => {
    await db.pool.query(
      `INSERT INTO nodes (id, pool, region, status, ssh_host) VALUES ('build-9', 'build', 'nbg1', 'active', '192.0.2.19')`,
    )
    await db.pool.query(`UPDATE nodes SET status = 'parked' WHERE id = 'db-1'`)
    const output = join(dir, 'ansible', 'inventory.yml')
    const disagrees = await fleetkit('inventory', ['inventory', ...EXAMPLE, '--output', output])
    assert.equal(disagrees.json.code, 'HOST_KEY_DISAGREES')
    assert.ok(['app-1', 'app-2'].includes(disagrees.json.data?.node as string))
    assert.ok(!existsSync(output), 'no inventory written')

    // The operator puts the rekeyed hosts' keys into fleet.yaml, as `seed --rekey` told them to.
    const reviewed = parse(readFileSync(packagePath('examples', 'fleet.yaml'), 'utf8')) as {
      nodes: { id: string; hostKey?: string }[]
    }
    for (const node of reviewed.nodes) {
      const stateKey = (await row(node.id))?.host_key_public as string | undefined
      if (stateKey) node.hostKey = stateKey
    }
    const definitionFile = join(dir, 'fleet-reviewed.yaml')
    writeFileSync(definitionFile, stringify(reviewed))
    const ran = await fleetkit('inventory', ['inventory', '--definition', definitionFile, '--output', output])
    assert.equal(ran.exitCode, 0, ran.stderr)
    assert.deepEqual(ran.json.result?.excluded, ['db-1'])
    assert.deepEqual(ran.json.result?.unpinned, ['build-9'])
    // build-2 is in a pool with a provider and declares no ssh.host: without a provisioned server it has
    // no address, so it is left out, naming what gives it one.
    assert.deepEqual(
      (ran.json.result?.unprovisioned as { node: string; action: string }[]).map((u) => [u.node, u.action]),
      [['build-2', 'fleetkit node provision build-2']],
    )
    const knownHosts = readFileSync(join(dir, 'ansible', 'known_hosts'), 'utf8')
    const pinned = ((await row('app-1'))?.host_key_public as string).split(' ').slice(0, 2).join(' ')
    assert.ok(knownHosts.split('\n').includes(`app-1 ${pinned}`), knownHosts)
    const { stdout } = await runProcessOk('ansible-inventory', ['-i', output, '--list'], {
      env: overlayEnv({ ANSIBLE_INVENTORY_UNPARSED_FAILED: 'true' }),
    })
    const listed = JSON.parse(stdout) as {
      _meta: { hostvars: Record<string, unknown> }
      region_nbg1: { hosts: string[] }
    }
    assert.deepEqual(Object.keys(listed._meta.hostvars).sort(), ['app-1', 'app-2', 'build-1', 'build-3', 'build-9'])
    assert.deepEqual(listed.region_nbg1.hosts, ['build-9'])

    // --output - is stdout for the inventory too; known_hosts goes to <state dir>/ansible/.
    const piped = await runFleetkit(['inventory', '--definition', definitionFile, '--output', '-'], { env })
    assert.equal(piped.code, 0, piped.stderr)
    assert.equal(
      piped.stdout,
      readFileSync(output, 'utf8').replaceAll(
        join(dir, 'ansible', 'known_hosts'),
        join(dir, 'state', 'ansible', 'known_hosts'),
      ),
    )
    assert.equal(readFileSync(join(dir, 'state', 'ansible', 'known_hosts'), 'utf8'), knownHosts)
  })
})
