import assert from 'node:assert/strict'
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { packagePath } from '../../../src/package-root.js'
import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'
import { runProcessOk } from '../../support/process.js'

const FIXTURES = packagePath('test', 'fixtures', 'definitions')
const EXAMPLE = packagePath('examples', 'fleet.yaml')

describe('fleetkit validate (the real command)', function () {
  this.timeout(120_000)
  let dir: string

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-validate-'))
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('accepts examples/fleet.yaml (example: true) without a flag: exit 0, a summary line, a line per pool and the canary, schema-valid --json', async () => {
    const human = await runFleetkit(['validate', '--definition', EXAMPLE])
    assert.equal(human.code, 0, human.stderr)
    const humanLines = human.stdout.trim().split('\n')
    assert.equal(humanLines.length, 1 + 3 + 1)
    assert.match(
      humanLines[0]!,
      /fleet "example" is valid: 3 pools, 6 nodes \(4 active, 1 drained, 1 disabled\).*; an example fleet \(example: true\)/,
    )
    assert.deepEqual(
      humanLines.slice(1, 4).map((l) => /^ {2}pool ([a-z-]+) /.exec(l)?.[1]),
      ['build', 'application', 'database'],
    )
    assert.match(humanLines[4]!, /^ {2}canary: /)

    const run = await runFleetkit(['validate', EXAMPLE, '--json'])
    assert.equal(run.code, 0, run.stderr)
    assertMatchesOutputSchema('validate', run.json)
    assert.equal(run.json.status, 0)
    assert.deepEqual(
      [run.json.result.fleet, run.json.result.pools, run.json.result.nodes.total, run.json.result.canary],
      ['example', 3, 6, 'build-1'],
    )
    assert.deepEqual(run.json.result.capacity.reserved, { cpu: 11.5, memoryMiB: 27648, diskGiB: 220 })
    assert.equal(run.json.result.example, true)
  })

  it('refuses the example once it no longer says example: true: every documentation range, exit 1, schema-valid --json', async () => {
    const text = await readFile(EXAMPLE, 'utf8')
    assert.match(text, /^example: true$/m)
    const real = join(dir, 'not-an-example.yaml')
    await writeFile(real, text.replace(/^example: true\n/m, ''))
    const run = await runFleetkit(['validate', '--definition', real, '--json'])
    assert.equal(run.code, 1)
    assertMatchesOutputSchema('validate', run.json)
    assert.equal(run.json.code, 'DEFINITION_INVALID')
    const errors = run.json.data.errors as Array<{ code: string; path: string }>
    assert.ok(errors.length >= 3)
    assert.ok(errors.every((e) => e.code === 'DOCUMENTATION_RANGE_REFUSED'))
  })

  it('flags a node sync could never reach (no ssh block) with NODE_UNREACHABLE_BY_SYNC, and still accepts the file', async () => {
    const text = await readFile(join(FIXTURES, 'valid.yaml'), 'utf8')
    const path = join(dir, 'no-ssh.yaml')
    const withoutSsh = text.replace(/^ {4}ssh: \{ host: db-1\.fleet\.internal, user: fleetkit \}\n/m, '')
    assert.notEqual(withoutSsh, text)
    await writeFile(path, withoutSsh)
    const human = await runFleetkit(['validate', path])
    assert.equal(human.code, 0, human.stderr)
    assert.match(human.stdout, /^Warning \(NODE_UNREACHABLE_BY_SYNC\) \/nodes\/1: node "db-1" declares no ssh block/m)
    const run = await runFleetkit(['validate', path, '--json'])
    assertMatchesOutputSchema('validate', run.json)
    assert.deepEqual(
      run.json.result.findings.map((f: { code: string; node: string }) => [f.code, f.node]),
      [['NODE_UNREACHABLE_BY_SYNC', 'db-1']],
    )
  })

  it('has no --allow-documentation-ranges flag any more', async () => {
    const run = await runFleetkit(['validate', '--definition', EXAMPLE, '--allow-documentation-ranges'])
    assert.notEqual(run.code, 0)
    assert.match(run.stderr, /allow-documentation-ranges/)
  })

  it('a typo and a wrong pool reference: both in one run', async () => {
    const run = await runFleetkit(['validate', '--definition', join(FIXTURES, 'typo-and-unknown-pool.yaml'), '--json'])
    assert.equal(run.code, 1)
    assertMatchesOutputSchema('validate', run.json)
    const errors = run.json.data.errors as Array<{ code: string; path: string; message: string }>
    assert.ok(errors.some((e) => e.code === 'DEFINITION_FIELD_UNKNOWN' && e.path === '/nodes/0/hostkey'))
    assert.ok(errors.some((e) => e.code === 'POOL_REFERENCE_UNKNOWN' && /did you mean "build"/.test(e.message)))
  })

  it('an alias bomb is DEFINITION_TOO_COMPLEX, and the command returns', async () => {
    const levels = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for (let i = 1; i <= 9; i++)
      levels.push(`l${i}: &l${i} [${Array.from({ length: 9 }, () => `*l${i - 1}`).join(', ')}]`)
    const bomb = join(dir, 'bomb.yaml')
    await writeFile(bomb, `${levels.join('\n')}\n`)
    const run = await runFleetkit(['validate', '--definition', bomb, '--json'])
    assert.equal(run.code, 1)
    assertMatchesOutputSchema('validate', run.json)
    assert.equal(run.json.code, 'DEFINITION_TOO_COMPLEX')
    const human = await runFleetkit(['validate', '--definition', bomb])
    assert.match(
      human.stderr,
      /^Error \(DEFINITION_TOO_COMPLEX\): .*bomb\.yaml is refused unread: it expands to more than 2000000 values/m,
    )
  })

  it('prints one line per error in human mode, then the envelope error', async () => {
    const run = await runFleetkit(['validate', '--definition', join(FIXTURES, 'docker-network-invalid.yaml')])
    assert.equal(run.code, 1)
    const lines = run.stderr.trim().split('\n')
    assert.deepEqual(
      lines.slice(0, 3).map((l) => l.split(' ').slice(0, 2).join(' ')),
      [
        'DOCKER_NETWORK_POLICY_INVALID /pools/build/dockerNetworkPolicy/base',
        'DOCKER_NETWORK_POLICY_INVALID /pools/database/dockerNetworkPolicy/prefix',
        'DOCKER_NETWORK_POLICY_INVALID /pools/build/dockerNetworkPolicy/defaultBridgeCidr',
      ],
    )
    assert.match(lines[0]!, /^DOCKER_NETWORK_POLICY_INVALID \/pools\/build\/dockerNetworkPolicy\/base \(\d+:\d+\): /)
    assert.match(lines[3]!, /^Error \(DEFINITION_INVALID\): .* has 3 errors$/)
  })

  for (const [fixture, codes] of [
    ['capacity-exceeded.yaml', ['POOL_CAPACITY_EXCEEDED']],
    ['unknown-field.yaml', ['DEFINITION_FIELD_MISSING', 'DEFINITION_FIELD_UNKNOWN']],
    ['docker-network-too-small.yaml', ['DOCKER_NETWORK_POLICY_TOO_SMALL', 'DOCKER_NETWORK_POLICY_TOO_SMALL']],
  ] as const) {
    it(`${fixture}: exit 1 with ${codes.join(', ')} under --json`, async () => {
      const run = await runFleetkit(['validate', '--definition', join(FIXTURES, fixture), '--json'])
      assert.equal(run.code, 1)
      assertMatchesOutputSchema('validate', run.json)
      assert.deepEqual((run.json.data.errors as Array<{ code: string }>).map((e) => e.code).sort(), [...codes].sort())
    })
  }

  it('malformed YAML: DEFINITION_UNREADABLE with line and column', async () => {
    const run = await runFleetkit(['validate', '--definition', join(FIXTURES, 'malformed.yaml'), '--json'])
    assert.equal(run.code, 1)
    assertMatchesOutputSchema('validate', run.json)
    assert.equal(run.json.code, 'DEFINITION_UNREADABLE')
    assert.deepEqual([run.json.data.line, run.json.data.column], [6, 13])
    assert.match(run.json.message, /line 6, column 13/)
  })

  for (const fixture of ['private-key.yaml', 'private-key-malformed.yaml', 'secret-token.yaml']) {
    it(`${fixture}: DEFINITION_SECRET_FOUND, and the secret is in neither stdout nor stderr`, async () => {
      const text = await readFile(join(FIXTURES, fixture), 'utf8')
      const secretLines = text
        .split('\n')
        .filter((l) => /PRIVATE KEY|^[A-Za-z0-9+/=]{20,}$|FakeHetzner|ghp_/.test(l.trim()))
        .map((l) => l.trim().replace(/^(tokenEnv|caFile): /, ''))
      assert.ok(secretLines.length > 0)
      for (const args of [[], ['--json']]) {
        const run = await runFleetkit(['validate', '--definition', join(FIXTURES, fixture), ...args])
        assert.equal(run.code, 1)
        assert.match(run.stdout + run.stderr, /DEFINITION_SECRET_FOUND/)
        for (const line of secretLines) assert.ok(!(run.stdout + run.stderr).includes(line), `leaked: ${line}`)
        if (args.length > 0) assertMatchesOutputSchema('validate', run.json)
      }
    })
  }

  it('a missing file is DEFINITION_MISSING; the path comes from FLEETKIT_DEFINITION, else ./fleet.yaml', async () => {
    const byEnv = await runFleetkit(['validate', '--json'], { env: { FLEETKIT_DEFINITION: join(dir, 'nope.yaml') } })
    assert.equal(byEnv.code, 1)
    assertMatchesOutputSchema('validate', byEnv.json)
    assert.equal(byEnv.json.code, 'DEFINITION_MISSING')
    assert.match(byEnv.json.message, /nope\.yaml/)
    await copyFile(EXAMPLE, join(dir, 'fleet.yaml'))
    const byDefault = await runFleetkit(['validate', '--json'], { cwd: dir })
    assert.equal(byDefault.code, 0, byDefault.stdout)
    assert.equal(byDefault.json.result.file, './fleet.yaml')
  })

  describe('--since REF (transitions, no state recorded)', () => {
    let repo: string
    // No DATABASE_URL and a state directory without a running server: the facts are "none".
    const noState = () => ({ env: { DATABASE_URL: '', FLEETKIT_STATE_DIR: join(dir, 'no-state') } })
    const git = (...args: string[]) =>
      runProcessOk('git', ['-C', repo, '-c', 'user.email=t@example.net', '-c', 'user.name=t', ...args])

    before(async () => {
      repo = join(dir, 'repo')
      await runProcessOk('git', ['init', '-q', repo])
      await copyFile(join(FIXTURES, 'valid.yaml'), join(repo, 'fleet.yaml'))
      await git('add', 'fleet.yaml')
      await git('commit', '-qm', 'fleet')
    })

    it('an unchanged file since HEAD is a safe change, reported with its ref', async () => {
      const run = await runFleetkit(
        ['validate', '--definition', join(repo, 'fleet.yaml'), '--since', 'HEAD', '--json'],
        noState(),
      )
      assert.equal(run.code, 0, run.stdout)
      assertMatchesOutputSchema('validate', run.json)
      assert.deepEqual(run.json.result.since, { ref: 'HEAD', factsSource: 'none' })
      const human = await runFleetkit(
        ['validate', '--definition', join(repo, 'fleet.yaml'), '--since', 'HEAD'],
        noState(),
      )
      assert.equal(human.code, 0, human.stderr)
      const lines = human.stdout
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('  '))
      assert.equal(lines.length, 2)
      assert.match(
        lines[0]!,
        /^Transition facts: no state read: DATABASE_URL is unset and the embedded PostgreSQL in .*no-state is not running; allocations, leases and canary runs are not checked\.$/,
      )
      assert.match(lines[1]!, /change since HEAD is safe \(state: not consulted\)$/)
    })

    it('a new agent version without a canary run is TRANSITION_UNPROVEN', async () => {
      const changed = join(repo, 'fleet.yaml')
      await writeFile(
        changed,
        (await readFile(join(FIXTURES, 'valid.yaml'), 'utf8')).replace('version: 1.2.3', 'version: 1.3.0'),
      )
      const run = await runFleetkit(['validate', '--definition', changed, '--since', 'HEAD', '--json'], noState())
      assert.equal(run.code, 1)
      assertMatchesOutputSchema('validate', run.json)
      assert.deepEqual(
        (run.json.data.errors as Array<{ code: string; path: string; check: string }>).map((e) => [
          e.code,
          e.path,
          e.check,
        ]),
        [['TRANSITION_UNPROVEN', '/release/version', 'definition:transition']],
      )
    })

    it('a revision that does not exist is DEFINITION_REVISION_UNKNOWN; so is a file outside Git', async () => {
      const bad = await runFleetkit(
        ['validate', '--definition', join(repo, 'fleet.yaml'), '--since', 'no-such-ref', '--json'],
        noState(),
      )
      assert.equal(bad.code, 1)
      assertMatchesOutputSchema('validate', bad.json)
      assert.equal(bad.json.code, 'DEFINITION_REVISION_UNKNOWN')
      const option = await runFleetkit(
        ['validate', '--definition', join(repo, 'fleet.yaml'), '--since=--output=/tmp/x', '--json'],
        noState(),
      )
      assert.equal(option.json.code, 'DEFINITION_REVISION_UNKNOWN')
      await copyFile(join(FIXTURES, 'valid.yaml'), join(dir, 'loose.yaml'))
      const loose = await runFleetkit(
        ['validate', '--definition', join(dir, 'loose.yaml'), '--since', 'HEAD', '--json'],
        noState(),
      )
      assert.equal(loose.json.code, 'DEFINITION_REVISION_UNKNOWN')
    })

    it('a revision whose file does not match the schema is DEFINITION_REVISION_INVALID', async () => {
      await writeFile(join(repo, 'fleet.yaml'), 'version: 1\nfleet: x\n')
      await git('commit', '-qam', 'broken')
      await copyFile(join(FIXTURES, 'valid.yaml'), join(repo, 'fleet.yaml'))
      const run = await runFleetkit(
        ['validate', '--definition', join(repo, 'fleet.yaml'), '--since', 'HEAD', '--json'],
        noState(),
      )
      assert.equal(run.code, 1)
      assertMatchesOutputSchema('validate', run.json)
      assert.equal(run.json.code, 'DEFINITION_REVISION_INVALID')
    })
  })
})
