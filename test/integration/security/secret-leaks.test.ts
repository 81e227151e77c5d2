// Secrets never leak (DESIGN.md "Boundaries"): real CLI, gateway, agent and embedded PostgreSQL
// processes; their stdout, stderr, logs, argv, files and database rows are searched for each secret.
import 'reflect-metadata'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { createServer as createHttpsServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { parse } from 'yaml'

import { packagePath } from '../../../src/package-root.js'
import { initPki } from '../../../src/pki/init-pki.js'
import { createJob } from '../../../src/store/scheduling/jobs.js'
import { copyAgentBundle } from '../../support/agent-bundle.js'
import { agentSeedScriptOf } from '../../support/agent-seed-script.js'
import { type CliRun, runFleetkit } from '../../support/cli.js'
import { type TestGateway, startTestGateway } from '../../support/gateway.js'
import { makeCsr, nodeKey, tamperSignature } from '../../support/pki.js'
import { type DisposablePostgres, type FreshDatabase, startDisposablePostgres } from '../../support/postgres.js'
import { runProcess } from '../../support/process.js'

const EXAMPLE = ['--definition', 'examples/fleet.yaml']
const PASSWORD = 'S3cr3tPassw0rd'

/** Runs a program other than the CLI (the agent bundle); a non-zero exit is a result, not a throw. */
const runProgram = (command: string, args: string[], env: NodeJS.ProcessEnv) =>
  runProcess(command, args, { cwd: packagePath(), env, timeoutMs: 120_000 })

/** A CLI run in this environment without debug or database settings, plus `extra`. */
const fleetkit = (args: string[], extra: Record<string, string>): Promise<CliRun> =>
  runFleetkit(args, { env: { FLEETKIT_DEBUG: undefined, DATABASE_URL: undefined, ...extra }, timeout: 120_000 })

/** The base64 lines of a PEM block: any one of them in a log means the block leaked. */
function pemLines(pem: string): string[] {
  return pem
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length >= 40 && !line.startsWith('-----'))
}

function assertAbsent(haystack: string, needles: Record<string, string | string[]>, where: string): void {
  for (const [name, value] of Object.entries(needles)) {
    for (const needle of Array.isArray(value) ? value : [value]) {
      assert.ok(!haystack.includes(needle), `${where} contains ${name}`)
    }
  }
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest()
const modeOf = async (path: string) => (await stat(path)).mode & 0o777

/** Every row of every table in the public schema, as text. */
async function dumpDatabase(db: FreshDatabase): Promise<string> {
  const tables = await db.pool.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
  )
  const out: string[] = []
  for (const { table_name: table } of tables.rows) {
    const rows = await db.pool.query(`SELECT t::text AS row FROM "${table}" t`)
    for (const row of rows.rows as { row: string }[]) out.push(`${table}: ${row.row}`)
  }
  return out.join('\n')
}

/** Every process's argv, as `ps` would show it. */
async function allCommandLines(): Promise<string> {
  const out: string[] = []
  for (const pid of (await readdir('/proc')).filter((name) => /^\d+$/.test(name))) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')
    if (cmdline) out.push(`${pid}: ${cmdline.split('\0').join(' ')}`)
  }
  return out.join('\n')
}

describe('secrets never leak (real processes)', function () {
  this.timeout(300_000)
  let dir: string

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-secret-leaks-'))
  })

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  describe('a DATABASE_URL password in CLI output', () => {
    // Unreachable servers (port 1 refuses at once). The unencoded '#', '?' and '/' shapes end
    // the URL's authority early, so a naive redaction shows the rest of the password.
    const urls = [
      `postgres://fleetkit:${PASSWORD}@127.0.0.1:1/x`,
      `postgres://fleetkit@127.0.0.1:1/x?password=${PASSWORD}`,
      `postgres://fleetkit:1#${PASSWORD}@127.0.0.1:1/x`,
      `postgres://fleetkit:1?${PASSWORD}@127.0.0.1:1/x`,
      `postgres://fleetkit:1/${PASSWORD}@127.0.0.1:1/x`,
      `postgres://fleetkit:${PASSWORD}@[::1/x`,
    ]
    const commands = (output: string) => [
      ['db', 'status', '--json'],
      ['db', 'status', '--debug'],
      ['db', 'migrate', '--json', '--debug'],
      ['node', 'token', 'app-1', ...EXAMPLE, '--debug'],
      ['seed', 'app-1', '--kind', 'worker', ...EXAMPLE, '--output', output, '--debug'],
      ['seed', 'app-1', '--kind', 'worker', ...EXAMPLE, '--output', output, '--json'],
      ['inventory', ...EXAMPLE, '--output', join(output, '..', 'inventory.yml'), '--debug'],
      ['validate', ...EXAMPLE, '--debug'],
    ]

    for (const [i, url] of urls.entries()) {
      it(`never prints it, with or without --debug or --json (${url.replace(PASSWORD, 'PASSWORD')})`, async () => {
        const work = join(dir, `url-${i}`)
        await mkdir(work)
        const output = join(work, 'app-1.user-data')
        const ran = await Promise.all(
          commands(output).map(async (args) => ({
            args,
            ...(await fleetkit(args, { DATABASE_URL: url, FLEETKIT_STATE_DIR: join(work, 'state') })),
          })),
        )
        for (const r of ran) {
          assertAbsent(r.stdout + r.stderr, { 'the password': PASSWORD }, `fleetkit ${r.args.join(' ')}`)
          if (r.args[0] !== 'validate') {
            assert.notEqual(r.code, 0, `fleetkit ${r.args.join(' ')} cannot succeed without its database`)
            assert.match(
              r.stdout + r.stderr,
              /STATE_UNREACHABLE/,
              `fleetkit ${r.args.join(' ')}: ${r.stdout}${r.stderr}`,
            )
          }
        }
        const debug = ran.find((r) => r.args.join(' ') === 'db status --debug')!
        assert.match(debug.stderr, /\n\s+at /, '--debug prints the stack trace (so the test searched one)')
        // A seed that could not register its node is not written, and leaves no temporary file.
        assert.deepEqual(
          (await readdir(work)).filter((name) => name !== 'state'),
          [],
        )
      })
    }
  })

  describe('a Hetzner token or GitHub token pasted into fleet.yaml', () => {
    it('is named by kind, never shown, by validate and by a command that reads the definition', async () => {
      const fixture = 'test/fixtures/definitions/secret-token.yaml'
      const text = await readFile(packagePath(fixture), 'utf8')
      const tokens = [/tokenEnv: (\S+)/.exec(text)?.[1], /caFile: (\S+)/.exec(text)?.[1]]
      assert.ok(
        tokens.every((token) => token && token.length >= 30),
        'the fixture holds both tokens',
      )
      for (const args of [
        ['validate', '--definition', fixture, '--json', '--debug'],
        ['validate', '--definition', fixture, '--debug'],
        ['inventory', '--definition', fixture, '--output', join(dir, 'inv.yml'), '--debug'],
      ]) {
        const ran = await fleetkit(args, {})
        assert.notEqual(ran.code, 0)
        assert.match(ran.stdout + ran.stderr, /DEFINITION_SECRET_FOUND/)
        assertAbsent(ran.stdout + ran.stderr, { 'a token': tokens as string[] }, `fleetkit ${args.join(' ')}`)
      }
    })
  })

  describe('validate --ansible', () => {
    it('runs ansible without DATABASE_URL or token variables in its environment', async () => {
      // Stand-ins for ansible that record the environment they were given.
      const bin = join(dir, 'fake-ansible')
      await mkdir(bin)
      const dump = join(dir, 'ansible-env.txt')
      for (const name of ['ansible-inventory', 'ansible-playbook']) {
        await writeFile(join(bin, name), `#!/bin/sh\nenv >> "${dump}"\necho 'fake ansible refuses' >&2\nexit 1\n`, {
          mode: 0o755,
        })
      }
      const ran = await fleetkit(['validate', ...EXAMPLE, '--ansible', '--json', '--debug'], {
        PATH: `${bin}:${process.env.PATH ?? ''}`,
        DATABASE_URL: `postgres://fleetkit:${PASSWORD}@127.0.0.1:1/x`,
        HCLOUD_TOKEN: `hcloud-${PASSWORD}`,
        FLEETKIT_SEED_TOKEN: `seed-${PASSWORD}`,
      })
      assert.notEqual(ran.code, 0)
      const seen = await readFile(dump, 'utf8')
      assert.match(seen, /ANSIBLE_NOCOLOR=1/, 'the stand-in ran')
      assertAbsent(
        seen + ran.stdout + ran.stderr,
        { 'a secret variable': PASSWORD },
        "ansible's environment and the output",
      )
    })
  })

  describe('the gateway, the agent and the CLI against a real PostgreSQL', () => {
    const NODE = '5d0c7a2e-8f7b-4b55-a1d4-6a2f0e9c3b21'
    let postgres: DisposablePostgres
    let gw: TestGateway
    let bundle: string
    let secret: string
    let wrongSecret: string
    let issuedKeyPem: string
    let issuedCertificatePem: string
    let leaseToken: string
    let agentKeyPem: string
    const csrs: string[] = []
    const agentOutput: string[] = []
    const gatewayPassword = () => new URL(postgres.url).password

    before(async () => {
      postgres = await startDisposablePostgres()
      assert.ok(gatewayPassword().length >= 8, 'the disposable server has a password, so the gateway has one to leak')
      gw = await startTestGateway({ postgresUrl: postgres.url, mode: 'process' })
      bundle = join(dir, 'fleetkit-agent')
      await copyAgentBundle(bundle)
    })

    after(async () => {
      await gw?.close()
      await postgres?.stop()
    })

    it('refuses bad enrollments and answers good ones without writing a secret, CSR or key to the database', async () => {
      await gw.declareNode(NODE)
      secret = await gw.issueSecret(NODE)
      wrongSecret = 'f'.repeat(64)
      const key = await nodeKey()
      const csr = await makeCsr(key, { name: `CN=${NODE}` })
      const foreignCsr = await makeCsr(await nodeKey(), { name: 'CN=someone-else' })
      const tampered = tamperSignature(csr)
      csrs.push(csr, foreignCsr, tampered)

      assert.equal((await gw.enrollPost({ node_id: NODE, enrollment_secret: secret, csr_pem: tampered })).status, 400)
      assert.equal((await gw.enrollPost({ node_id: NODE, enrollment_secret: secret, csr_pem: foreignCsr })).status, 400)
      assert.equal((await gw.enrollPost({ node_id: NODE, enrollment_secret: wrongSecret, csr_pem: csr })).status, 401)
      const strangerCsr = await makeCsr(await nodeKey(), { name: 'CN=no-such-node' })
      csrs.push(strangerCsr)
      assert.equal(
        (await gw.enrollPost({ node_id: 'no-such-node', enrollment_secret: secret, csr_pem: strangerCsr })).status,
        401,
      )
      assert.equal(
        (await gw.enrollPost(`{"node_id": "${NODE}", "enrollment_secret": "${secret}", "csr_pem": `)).status,
        400,
      )
      assert.equal(
        (await gw.enrollPost({ node_id: NODE, enrollment_secret: secret, csr_pem: csr, padding: 'x'.repeat(70_000) }))
          .status,
        413,
      )

      const refused = await dumpDatabase(gw.db)
      assertAbsent(
        refused,
        { 'the secret': secret, 'the wrong secret': wrongSecret, 'a CSR': csrs.flatMap(pemLines) },
        'the database',
      )
      const before = await gw.db.pool.query('SELECT enrollment_secret_sha256 FROM nodes WHERE id = $1', [NODE])
      const stored = before.rows[0].enrollment_secret_sha256 as Buffer
      assert.equal(stored.length, 32, 'only a 32-byte hash is stored')
      assert.deepEqual(stored, sha256(secret))

      const good = await gw.enrollPost({ node_id: NODE, enrollment_secret: secret, csr_pem: csr })
      assert.equal(good.status, 200)
      issuedKeyPem = key.privateKeyPem
      issuedCertificatePem = good.body.certificate_pem as string
      // A repeat with the same key is the lost-answer retry: the same certificate, nothing new issued.
      const replay = await gw.enrollPost({ node_id: NODE, enrollment_secret: secret, csr_pem: csr })
      assert.equal(replay.status, 200)
      assert.equal(
        replay.body.certificate_pem,
        issuedCertificatePem,
        'a repeat with the same key gets the certificate already issued',
      )
      const otherKeyCsr = await makeCsr(await nodeKey(), { name: `CN=${NODE}` })
      assert.equal(
        (await gw.enrollPost({ node_id: NODE, enrollment_secret: secret, csr_pem: otherKeyCsr })).status,
        401,
        'a secret works once for any other key',
      )
      assertAbsent(
        await dumpDatabase(gw.db),
        { 'the secret': secret, 'the key': pemLines(issuedKeyPem), 'the CSR': pemLines(csr) },
        'the database',
      )
    })

    it('stores only the hash of a lease token and does not log it', async () => {
      const identity = { keyPem: issuedKeyPem, certificatePem: issuedCertificatePem }
      await createJob(gw.db.pool, { nodeId: NODE, kind: 'checks', now: new Date() })
      const lease = await gw.agent(identity, 'POST', '/v1/agent/lease', { facts: {} })
      assert.equal(lease.status, 200, JSON.stringify(lease.body))
      const job = lease.body.job as { id: string; lease_token: string }
      leaseToken = job.lease_token
      assert.match(leaseToken, /^[0-9a-f]{64}$|^[A-Za-z0-9_-]{40,}$/)
      const row = await gw.db.pool.query('SELECT lease_token_sha256 FROM jobs WHERE id = $1', [job.id])
      assert.deepEqual(row.rows[0].lease_token_sha256, sha256(leaseToken))
      assertAbsent(await dumpDatabase(gw.db), { 'the lease token': leaseToken }, 'the database')
      const stale = await gw.agent(identity, 'POST', `/v1/agent/jobs/${job.id}/heartbeat`, {
        lease_token: `${leaseToken.slice(0, -4)}0000`,
      })
      assert.equal(stale.status, 409)
      const renew = await gw.agent(identity, 'POST', '/v1/agent/certificate/renew', { csr_pem: csrs[0] })
      assert.equal(renew.status, 409, 'renewal is not due for a fresh certificate')
      const done = await gw.agent(identity, 'POST', `/v1/agent/jobs/${job.id}/complete`, {
        lease_token: leaseToken,
        status: 'succeeded',
        result: { checks: [{ id: 'host:disk-free', status: 'pass', detail: 'ok' }] },
      })
      assert.equal(done.status, 200, JSON.stringify(done.body))
    })

    it('fleetkit-agent enroll prints neither the secret nor its key, and stages 0600 files in a 0700 directory', async () => {
      const agentNode = '9e3f1b0c-2a4d-4c6e-8f10-3b5a7c9d1e2f'
      await gw.declareNode(agentNode)
      const agentSecret = await gw.issueSecret(agentNode)
      const home = join(dir, 'agent')
      await mkdir(home)
      const secretFile = join(home, 'enrollment-secret')
      await writeFile(join(home, 'gateway-ca.pem'), gw.caPem)
      const envFile = join(home, 'agent.env')
      await writeFile(
        envFile,
        [
          `FLEETKIT_NODE_ID=${agentNode}`,
          `FLEETKIT_ENROLL_URL=${gw.enrollUrl}`,
          `FLEETKIT_GATEWAY_URL=${gw.agentUrl}`,
          `FLEETKIT_GATEWAY_CA_FILE=${join(home, 'gateway-ca.pem')}`,
          `FLEETKIT_ENROLLMENT_SECRET_FILE=${secretFile}`,
          `FLEETKIT_AGENT_PKI_DIR=${join(home, 'pki')}`,
          '',
        ].join('\n'),
      )
      const agentEnv = {
        PATH: process.env.PATH ?? '',
        FLEETKIT_AGENT_CONFIG: envFile,
        FLEETKIT_DEBUG: '1',
        FLEETKIT_LOG_LEVEL: 'debug',
      }

      await writeFile(secretFile, `${wrongSecret}\n`, { mode: 0o600 })
      const refused = await runProgram(process.execPath, [bundle, 'enroll'], agentEnv)
      agentOutput.push(refused.stdout, refused.stderr)
      assert.notEqual(refused.code, 0)
      assert.match(refused.stderr, /AGENT_ENROLL_FAILED/)
      assertAbsent(refused.stdout + refused.stderr, { 'the secret': wrongSecret }, "the refused agent's output")

      // A PKI directory others may write is refused before the secret is used up.
      await writeFile(secretFile, `${agentSecret}\n`, { mode: 0o600 })
      const sharedPki = join(home, 'shared-pki')
      await mkdir(sharedPki)
      await chmod(sharedPki, 0o777)
      const unsafe = await runProgram(process.execPath, [bundle, 'enroll'], {
        ...agentEnv,
        FLEETKIT_AGENT_PKI_DIR: sharedPki,
      })
      agentOutput.push(unsafe.stdout, unsafe.stderr)
      assert.equal(unsafe.code, 78, unsafe.stderr)
      assert.match(unsafe.stderr, /AGENT_CONFIG_INVALID/)
      assert.deepEqual(await readdir(sharedPki), [])
      assert.equal(existsSync(secretFile), true, 'the secret is kept for the next attempt')
      assertAbsent(unsafe.stdout + unsafe.stderr, { 'the secret': agentSecret }, "the refused agent's output")

      const enrolled = await runProgram(process.execPath, [bundle, 'enroll'], agentEnv)
      agentOutput.push(enrolled.stdout, enrolled.stderr)
      assert.equal(enrolled.code, 0, enrolled.stderr)
      agentKeyPem = await readFile(join(home, 'pki', 'agent.key'), 'utf8')
      assertAbsent(
        enrolled.stdout + enrolled.stderr,
        { 'the secret': agentSecret, 'the key': pemLines(agentKeyPem) },
        "the agent's output",
      )
      assert.equal(existsSync(secretFile), false, 'the secret file is deleted once enrolled')
      assert.equal(await modeOf(join(home, 'pki')), 0o700)
      const files = (await readdir(join(home, 'pki'))).sort()
      assert.deepEqual(files, ['agent.key', 'agent.pem', 'gateway-ca.pem'], 'no staged or temporary file is left')
      for (const file of files) assert.equal(await modeOf(join(home, 'pki', file)), 0o600, file)
      assertAbsent(
        await dumpDatabase(gw.db),
        { 'the secret': agentSecret, 'the key': pemLines(agentKeyPem) },
        'the database',
      )
    })

    it("seed and node token: 0600 files, the secret only in the seed or on node token's stdout, only hashes stored", async () => {
      const work = join(dir, 'seeds')
      await mkdir(work)
      const env = { DATABASE_URL: gw.db.url, FLEETKIT_PKI_DIR: gw.pkiDir, FLEETKIT_STATE_DIR: join(work, 'state') }
      const password = gatewayPassword()

      const agentSeed = join(work, 'build-1.user-data')
      const seeded = await fleetkit(
        // build-1 declares ssh.user and pins a host key: its agent seed carries a new one (--rekey).
        ['seed', 'build-1', '--kind', 'agent', '--rekey', ...EXAMPLE, '--output', agentSeed, '--json'],
        env,
      )
      assert.equal(seeded.code, 0, seeded.stdout + seeded.stderr)
      assert.equal(await modeOf(agentSeed), 0o600)
      // The secret is in the enrollment script the cloud-config writes; the host key in its ssh_keys.
      const agentUserData = await readFile(agentSeed, 'utf8')
      const seedSecret = /<<'FLEETKIT_ENROLLMENT_SECRET'\n([0-9a-f]{64})\n/.exec(agentSeedScriptOf(agentUserData))?.[1]
      assert.ok(seedSecret, 'the seed holds the secret')
      const agentHostKey = (parse(agentUserData) as { ssh_keys?: { ed25519_private?: string } }).ssh_keys
        ?.ed25519_private
      assert.ok(agentHostKey, 'the agent seed holds the host key')
      assertAbsent(
        seeded.stdout + seeded.stderr,
        {
          'the secret': seedSecret,
          'the host key': ['PRIVATE KEY', ...pemLines(agentHostKey)],
          'the database password': password,
        },
        'seed --json',
      )
      const hash = await gw.db.pool.query('SELECT enrollment_secret_sha256 FROM nodes WHERE id = $1', ['build-1'])
      assert.deepEqual(hash.rows[0].enrollment_secret_sha256, sha256(seedSecret))

      const workerSeed = join(work, 'app-1.user-data')
      const worker = await fleetkit(
        ['seed', 'app-1', '--kind', 'worker', '--rekey', '--yes', ...EXAMPLE, '--output', workerSeed, '--json'],
        env,
      )
      assert.equal(worker.code, 0, worker.stdout + worker.stderr)
      assert.equal(await modeOf(workerSeed), 0o600)
      const hostKey = /-----BEGIN OPENSSH PRIVATE KEY-----[\s\S]+?-----END OPENSSH PRIVATE KEY-----/.exec(
        await readFile(workerSeed, 'utf8'),
      )?.[0]
      assert.ok(hostKey, 'the worker seed holds the host key')
      assertAbsent(
        worker.stdout + worker.stderr,
        { 'the host key': ['PRIVATE KEY', ...pemLines(hostKey)], 'the database password': password },
        'seed --kind worker --rekey --json',
      )
      assert.deepEqual(
        (await readdir(work)).sort(),
        ['app-1.user-data', 'build-1.user-data'],
        'no temporary file is left beside the seeds',
      )

      const token = await fleetkit(['node', 'token', 'build-1', '--reissue', '--yes', ...EXAMPLE, '--json'], env)
      assert.equal(token.code, 0, token.stdout + token.stderr)
      const printed = (JSON.parse(token.stdout) as { result: { secret: string } }).result.secret
      assert.equal(token.stdout.split(printed).length - 1, 1, 'node token prints the secret exactly once')
      assertAbsent(token.stderr, { 'the secret': printed }, "node token's stderr")
      const human = await fleetkit(['node', 'token', 'build-1', '--reissue', '--yes', ...EXAMPLE], env)
      const humanSecret = /[0-9a-f]{64}/.exec(human.stdout)?.[0]
      assert.ok(humanSecret, human.stdout)
      assert.equal(human.stdout.split(humanSecret).length - 1, 1)
      assertAbsent(human.stderr, { 'the secret': humanSecret }, "node token's stderr")
      const tokenHash = await gw.db.pool.query('SELECT enrollment_secret_sha256 FROM nodes WHERE id = $1', ['build-1'])
      assert.deepEqual(tokenHash.rows[0].enrollment_secret_sha256, sha256(humanSecret))
      const dump = await dumpDatabase(gw.db)
      assertAbsent(
        dump,
        { 'a seed secret': seedSecret, 'a node token': [printed, humanSecret], 'the host key': pemLines(hostKey) },
        'the database',
      )

      // A directory anyone may write without the sticky bit would let another user swap the seed.
      const shared = join(work, 'shared')
      await mkdir(shared)
      await chmod(shared, 0o777)
      const refusedSeed = await fleetkit(
        [
          'seed',
          'app-1',
          '--kind',
          'worker',
          '--rekey',
          '--yes',
          ...EXAMPLE,
          '--output',
          join(shared, 'app-1.user-data'),
          '--json',
        ],
        env,
      )
      assert.equal(refusedSeed.code, 2, refusedSeed.stdout)
      assert.equal((JSON.parse(refusedSeed.stdout) as { code: string }).code, 'USAGE_INVALID')
      assert.deepEqual(await readdir(shared), [])
      await chmod(shared, 0o1777)
      const sticky = await fleetkit(
        [
          'seed',
          'app-1',
          '--kind',
          'worker',
          '--rekey',
          '--yes',
          ...EXAMPLE,
          '--output',
          join(shared, 'app-1.user-data'),
          '--json',
        ],
        env,
      )
      assert.equal(sticky.code, 0, sticky.stdout)
      assert.deepEqual(await readdir(shared), ['app-1.user-data'])
      assert.equal(await modeOf(join(shared, 'app-1.user-data')), 0o600)

      const status = await fleetkit(['db', 'status', '--json', '--debug'], env)
      assert.equal(status.code, 0, status.stdout + status.stderr)
      assertAbsent(status.stdout + status.stderr, { 'the database password': password }, 'db status')
    })

    it('no process shows the database password on its command line', async () => {
      assertAbsent(await allCommandLines(), { 'the database password': gatewayPassword() }, 'a command line')
    })

    it("the gateway's logs hold no secret, CSR, key, certificate, lease token or database password", async () => {
      await gw.close()
      const logs = gw.logs.join('\n')
      const stderr = gw.stderr.join('')
      const requests = gw.logs
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((entry) => entry.msg === 'request')
      assert.ok(
        requests.some((entry) => entry.route === '/v1/enroll' && entry.status === 401),
        'refusals are logged (so the search saw them)',
      )
      assert.ok(requests.some((entry) => entry.route === '/v1/enroll' && entry.status === 400))
      assert.ok(requests.some((entry) => entry.route === '/v1/agent/jobs/:id/heartbeat' && entry.status === 409))
      assertAbsent(
        logs + stderr,
        {
          'the secret': secret,
          'the wrong secret': wrongSecret,
          'a CSR': csrs.flatMap(pemLines),
          'the issued key': pemLines(issuedKeyPem),
          'the agent key': pemLines(agentKeyPem),
          'the issued certificate': pemLines(issuedCertificatePem),
          'the lease token': leaseToken,
          'the database password': gatewayPassword(),
        },
        "the gateway's logs",
      )
      assertAbsent(
        agentOutput.join(''),
        { 'the lease token': leaseToken, 'the issued key': pemLines(issuedKeyPem) },
        "the agent's output",
      )
    })
  })

  describe('the PKI directory', () => {
    it('is refused by ca init, the gateway and agent seeds when group or others may write it', async () => {
      const pkiDir = join(dir, 'shared-pki')
      await mkdir(pkiDir)
      await chmod(pkiDir, 0o777)
      const init = await fleetkit(['ca', 'init', '--json'], { FLEETKIT_PKI_DIR: pkiDir })
      assert.equal((JSON.parse(init.stdout) as { code: string }).code, 'CA_KEY_PERMISSIONS', init.stdout)
      assert.deepEqual(await readdir(pkiDir), [], 'nothing is written into it')

      await chmod(pkiDir, 0o700)
      const created = await fleetkit(['ca', 'init', '--json'], { FLEETKIT_PKI_DIR: pkiDir })
      assert.equal(created.code, 0, created.stdout)
      for (const key of ['ca.key', 'server.key']) assert.equal(await modeOf(join(pkiDir, key)), 0o600, key)
      assertAbsent(created.stdout + created.stderr, { 'a private key': 'PRIVATE KEY' }, 'ca init')
      // Someone able to write the directory could append their CA to the bundle seeds pin.
      await chmod(pkiDir, 0o770)
      const serve = await fleetkit(['gateway', 'serve'], {
        FLEETKIT_PKI_DIR: pkiDir,
        DATABASE_URL: `postgres://fleetkit:${PASSWORD}@127.0.0.1:1/x`,
      })
      assert.notEqual(serve.code, 0)
      assert.match(serve.stderr, /Error \(CA_KEY_PERMISSIONS\): the PKI directory/, serve.stderr)
      const seed = await fleetkit(
        ['seed', 'build-1', '--kind', 'agent', ...EXAMPLE, '--output', join(dir, 'refused.user-data'), '--json'],
        { FLEETKIT_PKI_DIR: pkiDir, DATABASE_URL: `postgres://fleetkit:${PASSWORD}@127.0.0.1:1/x` },
      )
      assert.equal((JSON.parse(seed.stdout) as { code: string }).code, 'CA_KEY_PERMISSIONS', seed.stdout)
      assertAbsent(
        serve.stdout + serve.stderr + seed.stdout + seed.stderr,
        { 'the password': PASSWORD },
        'gateway serve and seed',
      )
    })
  })

  describe('release URLs with credentials or a presigned query', () => {
    const TOKEN = 'T0kenS3cretValue'
    const publicKey = Buffer.alloc(32, 7).toString('base64')
    let server: Server | undefined
    let pkiDir: string

    after(async () => {
      if (server) await new Promise((resolve) => server!.close(resolve))
    })

    it('are refused or reported without the credential or the signature', async () => {
      for (const url of [
        `https://mirror:${TOKEN}@127.0.0.1:1/rel`,
        `https://127.0.0.1:1/rel?X-Amz-Signature=${TOKEN}`,
      ]) {
        const ran = await fleetkit(
          [
            'release',
            'verify',
            '--url',
            url,
            '--version',
            '1.0.0',
            '--arch',
            'amd64',
            '--public-key',
            publicKey,
            '--json',
            '--debug',
          ],
          {},
        )
        assert.equal((JSON.parse(ran.stdout) as { code: string }).code, 'RELEASE_INPUT_INVALID', ran.stdout)
        assertAbsent(ran.stdout + ran.stderr, { 'the token': TOKEN }, `release verify --url ${url}`)
      }
      // A mirror that redirects to a presigned object URL which then fails.
      pkiDir = join(dir, 'mirror-pki')
      await initPki({ pkiDir, serverNames: ['127.0.0.1'], now: new Date() })
      server = createHttpsServer(
        { key: await readFile(join(pkiDir, 'server.key')), cert: await readFile(join(pkiDir, 'server.pem')) },
        (req, res) => {
          if (req.url?.startsWith('/rel/'))
            res.writeHead(302, { location: `/signed${req.url}?X-Amz-Signature=${TOKEN}` }).end()
          else res.writeHead(403).end('denied')
        },
      )
      await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
      const port = (server.address() as AddressInfo).port
      const ran = await fleetkit(
        [
          'release',
          'verify',
          '--url',
          `https://127.0.0.1:${port}/rel`,
          '--version',
          '1.0.0',
          '--arch',
          'amd64',
          '--public-key',
          publicKey,
          '--ca-file',
          join(pkiDir, 'ca.pem'),
          '--json',
          '--debug',
        ],
        {},
      )
      const json = JSON.parse(ran.stdout) as { code: string; message: string }
      assert.equal(json.code, 'RELEASE_DOWNLOAD_FAILED', ran.stdout)
      assert.match(
        json.message,
        /\/signed\/rel\/1\.0\.0\/SHA256SUMS\?\*\*\*: HTTP 403/,
        'the redirected URL is named, its query hidden',
      )
      assertAbsent(ran.stdout + ran.stderr, { 'the signature': TOKEN }, 'release verify after a redirect')
    })
  })

  describe('the embedded PostgreSQL', () => {
    let stateDir: string | undefined
    let parent: string | undefined

    after(async () => {
      if (stateDir) await fleetkit(['db', 'stop'], { FLEETKIT_STATE_DIR: stateDir })
      if (parent) await rm(parent, { recursive: true, force: true })
    })

    it('keeps its password in a 0600 file: not on a command line, in output, in its log or in a leftover temp file', async () => {
      // The server runs as `postgres` when the tests run as root: it must pass through the parent.
      parent = await mkdtemp(join(tmpdir(), 'fleetkit-embedded-secret-'))
      await chmod(parent, 0o711)
      stateDir = join(parent, 'state')
      // What a killed initialisation leaves: initdb's clear password file.
      await mkdir(join(stateDir, 'postgres', 'tmp'), { recursive: true, mode: 0o700 })
      await writeFile(join(stateDir, 'postgres', 'tmp', 'pg-password-stale'), 'a password\n', { mode: 0o600 })
      const migrated = await fleetkit(['db', 'migrate', '--json', '--debug'], { FLEETKIT_STATE_DIR: stateDir })
      assert.equal(migrated.code, 0, migrated.stdout + migrated.stderr)
      const root = join(stateDir, 'postgres')
      const passwordFile = join(root, 'password')
      assert.equal(await modeOf(passwordFile), 0o600)
      const password = (await readFile(passwordFile, 'utf8')).trim()
      assert.ok(password.length >= 32)
      const server = JSON.parse(await readFile(join(root, 'server.json'), 'utf8')) as { pid: number }
      const cmdline = (await readFile(`/proc/${server.pid}/cmdline`, 'utf8')).split('\0').join(' ')
      assert.match(cmdline, /postgres/)
      assertAbsent(await allCommandLines(), { 'the embedded password': password }, 'a command line')
      const status = await fleetkit(['db', 'status', '--json', '--debug'], { FLEETKIT_STATE_DIR: stateDir })
      assertAbsent(
        migrated.stdout + migrated.stderr + status.stdout + status.stderr,
        { 'the embedded password': password },
        'db migrate and db status',
      )
      assertAbsent(
        await readFile(join(root, 'server.log'), 'utf8'),
        { 'the embedded password': password },
        'server.log',
      )
      const scratch = existsSync(join(root, 'tmp')) ? await readdir(join(root, 'tmp')) : []
      assert.deepEqual(scratch, [], "initdb's password file is not left behind")
      assert.deepEqual(
        (await readdir(root)).filter((name) => name.startsWith('password.')),
        [],
        'no temporary password file is left',
      )
      // A restore that loosened the file is tightened back by the next command.
      await chmod(passwordFile, 0o644)
      const again = await fleetkit(['db', 'migrate', '--json'], { FLEETKIT_STATE_DIR: stateDir })
      assert.equal(again.code, 0, again.stdout + again.stderr)
      assert.equal(await modeOf(passwordFile), 0o600)
    })
  })
})
