// The first boot end to end with real parts: `fleetkit seed` renders the agent seed, bash runs
// it in a sandbox root, it installs the real agent bundle from a signed release and enrolls it.
// Then seeding the enrolled node again never strands it: refused without --reissue (also under
// `| head -c 100`), a failed write changes nothing, and a reissue keeps the agent working until
// the rebuilt host enrolls with the new secret.
// Last, `node provision` against the Hetzner stub: the user_data it recorded boots the real agent in
// a sandbox root, which enrolls with the gateway, and provisioning reaches `enrolled`.
import assert from 'node:assert/strict'
import { createPublicKey } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import type { Server } from 'node:https'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

import { parse, stringify } from 'yaml'

import { gunzipSync } from 'node:zlib'

import { fixedClock } from '../../../src/config/clock.js'
import { seededRng } from '../../../src/config/rng.js'
import { loadHostPolicy } from '../../../src/definition/host-policy.js'
import type { Definition } from '../../../src/definition/types.js'
import { provisionNode } from '../../../src/lifecycle/provision/node-provision.js'
import { readSeedFiles } from '../../../src/lifecycle/seed/seed-files.js'
import { packagePath } from '../../../src/package-root.js'
import { HetznerClient } from '../../../src/provider/hetzner.js'
import { startHetznerStub } from '../../../src/provider/hetzner-stub.js'
import { listNodeCertificates } from '../../../src/store/pki/certificates.js'
import { listEvents } from '../../../src/store/events.js'
import { getNode } from '../../../src/store/nodes/nodes.js'
import { agentBundle } from '../../support/agent-bundle.js'
import { fleetkitEntry, runFleetkit } from '../../support/cli.js'
import { type TestGateway, startTestGateway } from '../../support/gateway.js'
import { type DisposablePostgres, startDisposablePostgres } from '../../support/postgres.js'
import { eventually } from '../../support/eventually.js'
import { overlayEnv, type RunningProcess, runProcess, runProcessOk, startProcess } from '../../support/process.js'
import { agentSeedScriptOf, writeAgentSeedScript } from '../../support/agent-seed-script.js'
import { releaseMirrorPki, serveFiles } from '../../support/release-mirror.js'

const NODE_ID = 'build-1'
/** Commands the seed would run against the machine itself: recorded, never run. */
const RECORDED = ['apt-get', 'systemctl', 'modprobe', 'sysctl', 'useradd', 'chown']

/** The version the bundle prints (fleetkit's package version), pinned as release.version. */
const version = (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version
const mode = async (path: string) => (await stat(path)).mode & 0o777
const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  )

/** Stops a wait on a running agent once it has exited. */
const exitedEarly = (running: RunningProcess) => () => {
  const ended = running.exit()
  return ended ? `the agent exited (${ended.code ?? ended.signal})` : undefined
}

describe('first boot: fleetkit seed -> the seed in a sandbox root -> the real agent enrolled and heartbeating', function () {
  this.timeout(180_000)
  let postgres: DisposablePostgres | undefined
  let gw: TestGateway | undefined
  let mirror: Server | undefined
  let agent: RunningProcess | undefined
  let dir: string
  let root: string
  let bin: string
  let callsLog: string
  let seedFile: string
  const requested: string[] = []
  /** The bundle as packed (read once: another build may rewrite dist/ meanwhile). */
  let bundleBytes: Buffer
  /** Whether the machine's own agent directories exist: the test must leave that as it found it. */
  const machinePaths = ['/etc/fleetkit', '/var/lib/fleetkit', '/usr/local/bin/fleetkit-agent']
  let machineBefore: boolean[]
  /** Every agent this suite started, and what they said. */
  const agents: RunningProcess[] = []
  const agentStderr = () => agents.map((a) => a.stderr()).join('')

  before(async () => {
    machineBefore = await Promise.all(machinePaths.map(exists))
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-e2e-'))
    root = join(dir, 'root')
    bin = join(dir, 'bin')
    callsLog = join(dir, 'calls.log')
    await Promise.all(
      [root, bin, join(dir, 'mirror-pki'), join(dir, 'keys'), join(dir, 'dist')].map((d) =>
        mkdir(d, { recursive: true }),
      ),
    )
    await writeFile(callsLog, '')

    postgres = await startDisposablePostgres()
    gw = await startTestGateway({ postgresUrl: postgres.url })
    const bundle = await agentBundle()

    // The release: the real bundle for both architectures, packed by fleetkit, signed by openssl alone.
    bundleBytes = await readFile(bundle)
    assert.match(bundleBytes.subarray(0, 32).toString(), /^#!\/usr\/bin\/env node\n/)
    for (const arch of ['amd64', 'arm64']) {
      await mkdir(join(dir, 'dist', `linux-${arch}`))
      await writeFile(join(dir, 'dist', `linux-${arch}`, 'fleetkit-agent'), bundleBytes, { mode: 0o755 })
    }
    const releaseDir = join(dir, 'www', 'fleetkit-agent', version)
    await mkdir(dirname(releaseDir), { recursive: true })
    await runProcessOk(
      process.execPath,
      [fleetkitEntry(), 'release', 'pack', '--version', version, '--input', join(dir, 'dist'), '--output', releaseDir],
      { cwd: packagePath() },
    )
    const signingKey = join(dir, 'keys', 'release.key')
    await runProcessOk('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', signingKey])
    await runProcessOk('openssl', [
      'pkeyutl',
      '-sign',
      '-rawin',
      '-inkey',
      signingKey,
      '-in',
      join(releaseDir, 'SHA256SUMS'),
      '-out',
      join(dir, 'keys', 'sums.sig'),
    ])
    await writeFile(
      join(releaseDir, 'SHA256SUMS.sig'),
      (await readFile(join(dir, 'keys', 'sums.sig'))).toString('base64'),
    )
    const publicKey = createPublicKey(await readFile(signingKey, 'utf8'))
      .export({ type: 'spki', format: 'der' })
      .subarray(-32)
      .toString('base64')

    const mirrorPki = await releaseMirrorPki(join(dir, 'mirror-pki'))
    const served = await serveFiles(join(dir, 'www'), mirrorPki, requested)
    mirror = served.server

    // The definition: the example fleet pointed at the loopback gateway and mirror.
    const definition = parse(await readFile(packagePath('examples', 'fleet.yaml'), 'utf8'))
    definition.gateway = { url: gw.agentUrl, enrollUrl: gw.enrollUrl }
    definition.release = {
      url: `https://127.0.0.1:${served.port}/fleetkit-agent`,
      publicKey,
      version,
      caFile: 'release-ca.pem',
    }
    await copyFile(mirrorPki.caFile, join(dir, 'release-ca.pem'))
    // A host not built yet has no key to review: its agent seed pins a new one (ssh.user is declared).
    for (const node of definition.nodes as Array<{ id: string; hostKey?: string }>)
      if (node.id === NODE_ID) delete node.hostKey
    await writeFile(join(dir, 'fleet.yaml'), stringify(definition))

    for (const cmd of RECORDED) {
      await writeFile(join(bin, cmd), `#!/bin/bash\necho "${cmd} $*" >>"${callsLog}"\n`, { mode: 0o755 })
    }
    // runuser -u USER -- CMD...: recorded, then CMD runs as this user (no fleetkit-agent user is created here).
    await writeFile(
      join(bin, 'runuser'),
      `#!/bin/bash\necho "runuser $*" >>"${callsLog}"\nwhile [ "$1" != -- ]; do shift; done\nshift\nexec "$@"\n`,
      { mode: 0o755 },
    )
  })

  afterEach(function () {
    if (this.currentTest?.state === 'failed' && agents.length > 0) {
      process.stderr.write(`agent stderr:\n${agentStderr().split('\n').slice(-30).join('\n')}\n`)
    }
  })

  after(async () => {
    await agent?.stop('SIGKILL')
    if (mirror) await new Promise((resolve) => mirror!.close(resolve))
    await gw?.close()
    await postgres?.stop()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  /** PATH: the recording stubs first, then this Node.js (the bundle's `#!/usr/bin/env node`), then the system's. */
  const path = () => [bin, dirname(process.execPath), process.env.PATH ?? '/usr/bin:/bin'].join(':')

  /** `fleetkit-agent run` as installed in the sandbox `rootDir`, heartbeating every second. */
  function startAgent(rootDir: string): RunningProcess {
    const started = startProcess(join(rootDir, 'usr/local/bin/fleetkit-agent'), ['run'], {
      env: {
        PATH: path(),
        FLEETKIT_AGENT_CONFIG: join(rootDir, 'etc/fleetkit/agent.env'),
        FLEETKIT_GATEWAY_CA_FILE: join(rootDir, 'etc/fleetkit/gateway-ca.pem'),
        FLEETKIT_ENROLLMENT_SECRET_FILE: join(rootDir, 'var/lib/fleetkit/enrollment-secret'),
        FLEETKIT_AGENT_PKI_DIR: join(rootDir, 'var/lib/fleetkit/pki'),
        FLEETKIT_AGENT_HEARTBEAT_SECONDS: '1',
      },
    })
    agents.push(started)
    return started
  }

  /** The environment `fleetkit` runs with against the test gateway's database and PKI. */
  const cliEnv = () => ({
    DATABASE_URL: gw!.db.url,
    FLEETKIT_PKI_DIR: gw!.pkiDir,
    FLEETKIT_STATE_DIR: join(dir, 'state'),
    FLEETKIT_ACTOR: 'e2e-operator',
  })

  /** What a seed could change: status, the stored secret, certificates and events of the node. */
  async function nodeState(): Promise<unknown> {
    const { rows } = await gw!.db.pool.query(
      "SELECT status, encode(enrollment_secret_sha256, 'hex') AS hash, enrollment_secret_expires_at AS expires, enrollment_secret_reissued AS reissued FROM nodes WHERE id = $1",
      [NODE_ID],
    )
    const certificates = (await listNodeCertificates(gw!.db.pool, NODE_ID)).map((c) => [c.serial, c.revokedAt])
    return { ...rows[0], certificates, events: (await listEvents(gw!.db.pool, { nodeId: NODE_ID })).length }
  }

  /** Resolves once the database shows a heartbeat later than the one seen now. */
  async function nextHeartbeat(what: string, running: RunningProcess): Promise<void> {
    const seen = (await getNode(gw!.db.pool, NODE_ID))?.lastSeenAt?.getTime() ?? 0
    await eventually(what, async () => ((await getNode(gw!.db.pool, NODE_ID))?.lastSeenAt?.getTime() ?? 0) > seen, {
      stop: exitedEarly(running),
    })
  }

  it('fleetkit seed registers the node as provisioning and writes the seed', async () => {
    seedFile = join(dir, `${NODE_ID}.user-data`)
    const seeded = await runFleetkit(
      ['seed', NODE_ID, '--kind', 'agent', '--definition', join(dir, 'fleet.yaml'), '--output', seedFile, '--json'],
      {
        env: { DATABASE_URL: gw!.db.url, FLEETKIT_PKI_DIR: gw!.pkiDir, FLEETKIT_STATE_DIR: join(dir, 'state') },
      },
    )
    assert.equal(seeded.code, 0, seeded.stdout + seeded.stderr)
    assert.equal(JSON.parse(seeded.stdout).result.gzipped, false)
    assert.match(await readFile(seedFile, 'utf8'), /^#cloud-config\n/)
    assert.equal((await getNode(gw!.db.pool, NODE_ID))?.status, 'provisioning')
  })

  it('the seed installs the signed real agent and enrolls it with the gateway', async () => {
    // cloud-init's runcmd runs the seed's enrollment script; here bash runs it in the sandbox root.
    const seeded = await runProcess('bash', [await writeAgentSeedScript(seedFile)], {
      cwd: dir,
      env: overlayEnv({ PATH: path(), FLEETKIT_SEED_ROOT: root }),
    })
    assert.equal(seeded.code, 0, seeded.stderr)

    // Every release file came from the loopback mirror over TLS pinned to release.caFile.
    assert.deepEqual(
      new Set(requested),
      new Set([
        `/fleetkit-agent/${version}/SHA256SUMS`,
        `/fleetkit-agent/${version}/SHA256SUMS.sig`,
        `/fleetkit-agent/${version}/fleetkit-agent-${version}-linux-amd64.tar.zst`,
      ]),
    )

    const installed = join(root, 'usr/local/bin/fleetkit-agent')
    assert.ok((await readFile(installed)).equals(bundleBytes), 'the installed agent is the bundle, byte for byte')
    assert.equal(await mode(installed), 0o755)

    assert.equal((await getNode(gw!.db.pool, NODE_ID))?.status, 'active')
    const certificates = await listNodeCertificates(gw!.db.pool, NODE_ID)
    assert.equal(certificates.length, 1)
    assert.equal(
      await exists(join(root, 'var/lib/fleetkit/enrollment-secret')),
      false,
      'the secret is deleted after enrollment',
    )
    for (const name of ['agent.key', 'agent.pem', 'gateway-ca.pem']) {
      assert.equal(await mode(join(root, 'var/lib/fleetkit/pki', name)), 0o600, name)
    }
    assert.match(await readFile(join(root, 'var/lib/fleetkit/pki/agent.pem'), 'utf8'), /^-----BEGIN CERTIFICATE-----/)
    assert.match(seeded.stdout, new RegExp(`^enrolled ${NODE_ID}`, 'm'))

    const calls = (await readFile(callsLog, 'utf8')).split('\n')
    // br_netfilter is the seed's bootcmd guard and the role's work, never the enrollment script's.
    assert.ok(!calls.some((line) => line.startsWith('modprobe') || line.startsWith('sysctl')), calls.join('\n'))
    assert.ok(
      calls.includes(
        'apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends ca-certificates curl openssl zstd nodejs',
      ),
    )
    assert.ok(
      calls.some(
        (line) => line.startsWith('runuser -u fleetkit-agent -- env ') && line.endsWith(`${installed} enroll`),
      ),
    )
    assert.ok(calls.includes('systemctl enable --now fleetkit-agent.service'))
    assert.deepEqual(
      await Promise.all(machinePaths.map(exists)),
      machineBefore,
      "the machine's own agent paths are untouched",
    )
  })

  it('the installed agent runs with the sandbox paths and its heartbeats reach the database', async () => {
    const before = await getNode(gw!.db.pool, NODE_ID)
    assert.ok(before?.lastSeenAt, 'enrollment set last_seen_at')
    assert.equal(before.hostFactsAt, null, 'no host facts before the agent runs')
    agent = startAgent(root)

    const seen = await eventually(
      'a heartbeat with host facts in the database',
      async () => {
        const node = await getNode(gw!.db.pool, NODE_ID)
        return node?.hostFactsAt && node.lastSeenAt && node.lastSeenAt > before!.lastSeenAt! ? node : undefined
      },
      { stop: exitedEarly(agent) },
    )
    const later = await eventually(
      'a later heartbeat',
      async () => {
        const node = await getNode(gw!.db.pool, NODE_ID)
        return node?.lastSeenAt && node.lastSeenAt > seen.lastSeenAt! ? node : undefined
      },
      { stop: exitedEarly(agent) },
    )
    assert.equal(later.hostAgentVersion, version)
    assert.ok((later.hostCpuCount ?? 0) >= 1)
    assert.ok((later.hostMemoryMb ?? 0) > 0)
    assert.equal(later.hostKernel, (await readFile('/proc/sys/kernel/osrelease', 'utf8')).trim())

    await agent.stop('SIGTERM')
    assert.equal(agent.exit()?.code, 0, agentStderr())
    assert.deepEqual(
      await Promise.all(machinePaths.map(exists)),
      machineBefore,
      "the machine's own agent paths are untouched",
    )
  })

  it('seeding the enrolled node again (--output - | head -c 100) is refused, changes nothing, and the running agent keeps heartbeating', async () => {
    agent = startAgent(root)
    await nextHeartbeat("the restarted agent's heartbeat", agent)
    const before = await nodeState()
    const cli = [
      process.execPath,
      fleetkitEntry(),
      'seed',
      NODE_ID,
      '--kind',
      'agent',
      '--definition',
      join(dir, 'fleet.yaml'),
      '--output',
      '-',
    ]
    const piped = await runProcess(
      'bash',
      ['-c', `set -o pipefail; ${cli.map((a) => `'${a}'`).join(' ')} | head -c 100`],
      { cwd: packagePath(), env: overlayEnv(cliEnv()) },
    )
    assert.notEqual(piped.code, 0)
    assert.equal(piped.stdout, '', 'nothing of a seed was printed')
    assert.match(piped.stderr, /Error \(NODE_NOT_PROVISIONING\): node build-1 is active/)
    assert.deepEqual(await nodeState(), before)
    await nextHeartbeat('a heartbeat after the refused seed', agent)
  })

  it('a --reissue whose seed cannot be written changes nothing; the agent keeps heartbeating', async () => {
    const before = await nodeState()
    const failed = await runFleetkit(
      [
        'seed',
        NODE_ID,
        '--kind',
        'agent',
        '--reissue',
        // A rebuilt host gets a new host key too (the node declares ssh.user and has one pinned).
        '--rekey',
        '--yes',
        '--definition',
        join(dir, 'fleet.yaml'),
        '--output',
        join(dir, 'no-such-dir', 'seed'),
        '--json',
      ],
      { env: cliEnv() },
    )
    assert.equal(failed.json.code, 'OUTPUT_WRITE_FAILED', failed.stdout)
    assert.deepEqual(await nodeState(), before)
    await nextHeartbeat('a heartbeat after the failed reissue', agent!)
  })

  it('--reissue keeps the node active and its certificate accepted until the rebuilt host enrolls with the new secret, which revokes the old one', async () => {
    const reissuedSeed = join(dir, 'reissued.user-data')
    const reissued = await runFleetkit(
      [
        'seed',
        NODE_ID,
        '--kind',
        'agent',
        '--reissue',
        // A rebuilt host gets a new host key too (the node declares ssh.user and has one pinned).
        '--rekey',
        '--yes',
        '--definition',
        join(dir, 'fleet.yaml'),
        '--output',
        reissuedSeed,
        '--json',
      ],
      { env: cliEnv() },
    )
    assert.equal(reissued.code, 0, reissued.stdout + reissued.stderr)
    assert.equal(JSON.parse(reissued.stdout).result.reissued, true)
    assert.equal((await getNode(gw!.db.pool, NODE_ID))?.status, 'active')
    const [event] = await listEvents(gw!.db.pool, { nodeId: NODE_ID, kind: 'secret_reissued' })
    assert.deepEqual(
      [event?.data.actor, event?.data.via, event?.data.previous_status],
      ['e2e-operator', 'seed', 'active'],
    )
    await nextHeartbeat('a heartbeat with the old certificate after the reissue', agent!)

    // The rebuilt host: the reissued seed in a fresh sandbox root enrolls with the new secret.
    const rebuilt = join(dir, 'rebuilt-root')
    await mkdir(rebuilt)
    const seeded = await runProcess('bash', [await writeAgentSeedScript(reissuedSeed)], {
      cwd: dir,
      env: overlayEnv({ PATH: path(), FLEETKIT_SEED_ROOT: rebuilt }),
    })
    assert.equal(seeded.code, 0, seeded.stderr)
    const certificates = await listNodeCertificates(gw!.db.pool, NODE_ID)
    assert.equal(certificates.length, 2)
    assert.deepEqual(
      certificates.map((c) => c.revokedAt !== null).sort(),
      [false, true],
      'the new enrollment revoked the old certificate',
    )
    const node = await getNode(gw!.db.pool, NODE_ID)
    assert.equal(node?.status, 'active')
    assert.notEqual(node?.enrollmentSecretUsedAt, null)

    await agent!.stop('SIGTERM')
    agent = startAgent(rebuilt)
    await nextHeartbeat('a heartbeat of the re-enrolled agent', agent)
    await agent.stop('SIGTERM')
  })

  it('node provision: the real agent runs the user_data the stub recorded, enrolls with the gateway, and provisioning reaches enrolled', async () => {
    const clock = fixedClock(new Date())
    const stub = await startHetznerStub({ clock, actionDurationMs: 1000 })
    try {
      const client = new HetznerClient({
        env: { HETZNER_API_TOKEN: stub.token },
        baseUrl: stub.url,
        clock,
        sleep: async (ms) => clock.advance(ms),
        rng: seededRng('e2e-provision'),
      })
      const definition = parse(await readFile(join(dir, 'fleet.yaml'), 'utf8')) as Definition
      definition.nodes.push({ id: 'build-9', pool: 'build', state: 'active' })
      // The keys providers.hetzner.sshKeys names, uploaded to the project as an operator would.
      for (const name of definition.providers?.hetzner?.sshKeys ?? [])
        await client.createSshKey({ name, public_key: `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5${name} ${name}` })
      const provisionedRoot = join(dir, 'provisioned-root')
      await mkdir(provisionedRoot)
      let boot: { code: number | null; stderr: string } | undefined
      const result = await provisionNode({
        pool: gw!.db.pool,
        nodeId: 'build-9',
        definition,
        files: await readSeedFiles('agent', { FLEETKIT_PKI_DIR: gw!.pkiDir }, definition, dir),
        client,
        policy: loadHostPolicy(),
        request: { regions: ['fsn1'], types: ['cx22'], image: 'ubuntu-24.04' },
        resume: false,
        waitMs: 600_000,
        pollMs: 1000,
        clock,
        rng: seededRng('e2e-provision-seed'),
        sleep: async (ms) => clock.advance(ms),
        // The server boots: cloud-init decodes the recorded user_data and runs the seed's script.
        afterStep: async (step) => {
          if (step !== 'awaiting_enrollment') return
          const create = stub.requests.find((r) => r.method === 'POST' && r.path === '/servers')!
          const userData = gunzipSync(Buffer.from((create.body as { user_data: string }).user_data, 'base64'))
          const script = join(dir, 'build-9.user-data.sh')
          await writeFile(script, agentSeedScriptOf(userData.toString('utf8')), { mode: 0o700 })
          boot = await runProcess('bash', [script], {
            cwd: dir,
            env: overlayEnv({ PATH: path(), FLEETKIT_SEED_ROOT: provisionedRoot }),
          })
        },
      })
      assert.equal(boot?.code, 0, boot?.stderr)
      assert.equal(result.state, 'enrolled')
      assert.equal((await getNode(gw!.db.pool, 'build-9'))?.status, 'active')
      assert.equal((await listNodeCertificates(gw!.db.pool, 'build-9')).length, 1)
      const enrolledAt = (await getNode(gw!.db.pool, 'build-9'))?.lastSeenAt?.getTime() ?? 0
      agent = startAgent(provisionedRoot)
      const heartbeat = async () => ((await getNode(gw!.db.pool, 'build-9'))?.lastSeenAt?.getTime() ?? 0) > enrolledAt
      await eventually('a heartbeat of the provisioned agent', heartbeat, { stop: exitedEarly(agent) })
      await agent.stop('SIGTERM')
    } finally {
      await stub.close()
    }
  })
})
