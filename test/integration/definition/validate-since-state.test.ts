import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { failureCodeSpec } from '../../../src/checks/failure-codes.js'
import { packagePath } from '../../../src/package-root.js'
import { upsertDeclaredNode } from '../../../src/store/nodes/nodes.js'
import { recordCanaryProof } from '../../../src/store/scheduling/transition-facts.js'
import { assertMatchesOutputSchema, type CliRun, runFleetkit } from '../../support/cli.js'
import { freePort } from '../../support/ports.js'
import {
  type DisposablePostgres,
  type FreshDatabase,
  freshDatabase,
  startDisposablePostgres,
} from '../../support/postgres.js'
import { runProcessOk } from '../../support/process.js'

// `fleetkit validate --since` with the state: the real command, DATABASE_URL on a disposable
// PostgreSQL, the output checked against schema/output/validate.schema.json.
const VALID = packagePath('test', 'fixtures', 'definitions', 'valid.yaml')

const fleetkit = (args: string[], env: NodeJS.ProcessEnv) => runFleetkit(args, { env })

const codes = (run: CliRun) =>
  ((run.json.data?.errors as Array<{ code: string; path: string }> | undefined) ?? []).map((e) => [e.code, e.path])

describe('fleetkit validate --since with the state (real command, real PostgreSQL)', function () {
  this.timeout(180_000)
  let server: DisposablePostgres
  let db: FreshDatabase
  let dir: string
  let fleet: string
  const valid = readFileSync(VALID, 'utf8')
  const withoutDb1 = valid.replace(/ {2}- id: db-1\n(?: {4}.*\n)+/, '')

  before(async () => {
    server = await startDisposablePostgres()
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-validate-state-'))
    await runProcessOk('git', ['init', '-q', dir])
    fleet = join(dir, 'fleet.yaml')
    await copyFile(VALID, fleet)
    await runProcessOk('git', ['-C', dir, '-c', 'user.email=t@example.net', '-c', 'user.name=t', 'add', 'fleet.yaml'])
    await runProcessOk('git', [
      '-C',
      dir,
      '-c',
      'user.email=t@example.net',
      '-c',
      'user.name=t',
      'commit',
      '-qm',
      'fleet',
    ])
  })
  after(async () => {
    await server?.stop()
    if (dir) await rm(dir, { recursive: true, force: true })
  })
  beforeEach(async () => {
    db = await freshDatabase(server.url)
    for (const [id, pool] of [
      ['build-1', 'build'],
      ['db-1', 'database'],
    ] as const)
      await upsertDeclaredNode(db.pool, { id, pool, status: 'active' })
  })
  afterEach(async () => {
    await db?.drop()
  })

  const validate = (extra: string[] = ['--json']) =>
    fleetkit(['validate', '--definition', fleet, '--since', 'HEAD', ...extra], { DATABASE_URL: db.url })

  it('refuses removing a node that holds an active allocation, and accepts it once released (factsSource "store")', async () => {
    assert.notEqual(withoutDb1, valid)
    await writeFile(fleet, withoutDb1)
    await db.pool.query(
      "INSERT INTO allocations (node_id, owner, cpu, memory_mib, disk_gib) VALUES ('db-1', 'runner-1', 1, 1024, 10)",
    )
    const refused = await validate()
    assert.equal(refused.code, 1, refused.stderr)
    assertMatchesOutputSchema('validate', refused.json)
    assert.deepEqual(codes(refused), [['TRANSITION_NODE_REMOVAL_UNSAFE', '/nodes']])
    assert.ok(
      !refused.stdout.includes(server.password) && !refused.stderr.includes(server.password),
      'the DATABASE_URL password leaked',
    )

    await db.pool.query("UPDATE allocations SET status = 'released', released_at = now(), release_reason = 'test'")
    const accepted = await validate()
    assert.equal(accepted.code, 0, accepted.stdout)
    assertMatchesOutputSchema('validate', accepted.json)
    assert.deepEqual(accepted.json.result.since, { ref: 'HEAD', factsSource: 'store' })

    const human = await validate([])
    assert.equal(human.code, 0, human.stderr)
    assert.match(
      human.stdout,
      /^Transition facts: state read from DATABASE_URL postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/fleetkit_test_\w+\.\n/,
    )
    assert.match(human.stdout, /change since HEAD is safe \(state: from the store\)/)
    assert.ok(!human.stdout.includes(server.password))
  })

  it('refuses a new image without a recorded canary proof, and accepts it with one', async () => {
    await writeFile(fleet, valid.replace(/image: ubuntu-24\.04/, 'image: ubuntu-26.04'))
    const refused = await validate()
    assert.equal(refused.code, 1)
    assertMatchesOutputSchema('validate', refused.json)
    assert.deepEqual(codes(refused), [['TRANSITION_UNPROVEN', '/pools/build/image']])

    await recordCanaryProof(db.pool, {
      kind: 'image',
      value: 'ubuntu-26.04',
      nodeId: 'build-1',
      provenAt: new Date('2026-03-01T12:00:00Z'),
    })
    const accepted = await validate()
    assert.equal(accepted.code, 0, accepted.stdout)
    assertMatchesOutputSchema('validate', accepted.json)
    assert.equal(accepted.json.result.since.factsSource, 'store')
  })

  it('a DATABASE_URL that cannot be reached is STATE_UNREACHABLE, not a silent "none"', async () => {
    await writeFile(fleet, valid)
    const url = `postgres://fleetkit:not-a-real-password-7@127.0.0.1:${await freePort()}/fleetkit`
    const run = await fleetkit(['validate', '--definition', fleet, '--since', 'HEAD', '--json'], { DATABASE_URL: url })
    assert.equal(run.code, failureCodeSpec('STATE_UNREACHABLE').exitCode ?? 1)
    assertMatchesOutputSchema('validate', run.json)
    assert.equal(run.json.code, 'STATE_UNREACHABLE')
    assert.ok(!run.stdout.includes('not-a-real-password-7') && !run.stderr.includes('not-a-real-password-7'))
  })

  it('reads the embedded server of the state directory when it is running, and never starts it', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'fleetkit-validate-embedded-'))
    const env = { DATABASE_URL: '', FLEETKIT_STATE_DIR: stateDir }
    try {
      await writeFile(fleet, valid.replace(/image: ubuntu-24\.04/, 'image: ubuntu-26.04'))
      const stopped = await fleetkit(['validate', '--definition', fleet, '--since', 'HEAD', '--json'], env)
      assertMatchesOutputSchema('validate', stopped.json)
      assert.deepEqual(codes(stopped), [['TRANSITION_UNPROVEN', '/pools/build/image']])
      const status = await fleetkit(['db', 'status', '--json'], env)
      assert.equal(status.json.result.server.embedded.running, false, 'validate started the embedded server')

      const migrated = await fleetkit(['db', 'migrate', '--json'], env)
      assert.equal(migrated.code, 0, migrated.stderr)
      await writeFile(fleet, valid)
      const running = await fleetkit(['validate', '--definition', fleet, '--since', 'HEAD', '--json'], env)
      assert.equal(running.code, 0, running.stdout)
      assertMatchesOutputSchema('validate', running.json)
      assert.deepEqual(running.json.result.since, { ref: 'HEAD', factsSource: 'store' })
    } finally {
      await fleetkit(['db', 'stop'], env)
      await rm(stateDir, { recursive: true, force: true })
    }
  })
})
