// One command line, one set of conventions, checked on the real CLI: unknown commands, usage
// errors, the shared --definition/-d and --state-dir flags, `fleetkit version`, shell completion.
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { packagePath } from '../../../src/package-root.js'
import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'
import { runProcessOk } from '../../support/process.js'

describe('cli: conventions every command shares (the real CLI)', function () {
  this.timeout(120_000)
  let dir: string

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'fleetkit-cli-'))
  })

  after(() => rmSync(dir, { recursive: true, force: true }))

  describe('an unknown command', () => {
    it('is COMMAND_UNKNOWN with "did you mean", in the JSON envelope under --json', async () => {
      const run = await runFleetkit(['valdate', '--json'])
      assert.equal(run.code, 2, run.stderr)
      assertMatchesOutputSchema('error', run.json)
      assert.equal(run.json.code, 'COMMAND_UNKNOWN')
      assert.equal(run.json.message, 'no fleetkit command "valdate"; did you mean "validate"?')
      assert.deepEqual(run.json.data, { command: 'valdate', suggestions: ['validate'] })
      assert.deepEqual(run.json.actions, [
        'fleetkit help validate',
        'fleetkit help',
        'fleetkit runbook COMMAND_UNKNOWN',
      ])
    })

    it('prints one error line and the commands to try in human mode', async () => {
      const run = await runFleetkit(['release', 'packk'])
      assert.equal(run.code, 2)
      assert.equal(run.stdout, '')
      assert.match(
        run.stderr,
        /^Error \(COMMAND_UNKNOWN\): no fleetkit command "release packk"; did you mean "release pack"\?$/m,
      )
      assert.match(run.stderr, /^ {2}fleetkit help release pack$/m)
      assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace')
    })

    it('a topic followed by a word that is none of its commands fails too, instead of printing the topic help', async () => {
      const run = await runFleetkit(['db', 'stat', '--json'])
      assert.equal(run.code, 2, run.stderr)
      assertMatchesOutputSchema('error', run.json)
      assert.equal(run.json.code, 'COMMAND_UNKNOWN')
      assert.deepEqual(run.json.data.suggestions, ['db status', 'db stop'])
      const topic = await runFleetkit(['db'])
      assert.equal(topic.code, 0, 'a topic alone still shows its help')
      assert.match(topic.stdout, /db status/)
    })
  })

  // A hostile fleet.yaml in a pull request, or a pasted argument, wrote fake lines into CI logs and terminals:
  // the window retitled, the screen cleared, "Fleet is valid" on a line of its own, the row reversed.
  describe('text from argv or a definition is printed escaped, never obeyed', () => {
    const hostile = '\u001b]0;pwned\u0007\u001b[2J\u001b[31mX\nFleet is valid\u202e'
    const escaped = '\\u001b]0;pwned\\u0007\\u001b[2J\\u001b[31mX\\u000aFleet is valid\\u202e'
    // eslint-disable-next-line no-control-regex
    const raw = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/

    it('an unknown command, a missing definition and a refused --owner', async () => {
      const unknown = await runFleetkit([hostile])
      assert.equal(unknown.code, 2)
      assert.doesNotMatch(unknown.stderr, raw)
      // Quoted as JSON, as other echoed arguments are; the mark JSON leaves alone is escaped too.
      assert.equal(
        unknown.stderr.split('\n')[0],
        'Error (COMMAND_UNKNOWN): no fleetkit command "\\u001b]0;pwned\\u0007\\u001b[2J\\u001b[31mX\\nFleet is valid\\u202e"',
      )
      const missing = await runFleetkit(['validate', join(dir, hostile)])
      assert.doesNotMatch(missing.stderr, raw)
      assert.ok(missing.stderr.startsWith(`Error (DEFINITION_MISSING): no fleet definition at ${dir}/${escaped}\n`))
      // Stored, then printed by alloc list and node show: refused before the state is opened.
      const owner = await runFleetkit(
        ['alloc', 'reserve', '--node', 'build-1', '--cpu', '1', '--owner', 'ab\u202ecd', '--json'],
        { env: { FLEETKIT_STATE_DIR: join(dir, 'no-state') } },
      )
      assert.equal(owner.json.code, 'USAGE_INVALID', owner.stdout)
      assert.match(owner.json.message, /bidi/)
      assert.ok(!existsSync(join(dir, 'no-state')), 'no state was opened')
    })

    it("a definition's keys, as a pool name and as an unknown field; a long key is cut", async () => {
      const example = readFileSync(packagePath('examples', 'fleet.yaml'), 'utf8')
      const file = join(dir, 'hostile-keys.yaml')
      const long = 'k'.repeat(100_000)
      writeFileSync(
        file,
        example.replace('pools:\n', `pools:\n  ${JSON.stringify(`b${hostile}`)}: {}\n`) +
          `${JSON.stringify(hostile)}: 1\n${long}: 1\n`,
      )
      const run = await runFleetkit(['validate', file])
      assert.equal(run.code, 1, run.stderr)
      assert.doesNotMatch(run.stderr, raw)
      const lines = run.stderr.split('\n')
      assert.ok(
        lines.some((l) => l.startsWith(`DEFINITION_FIELD_UNKNOWN /${escaped} (`)),
        run.stderr,
      )
      assert.ok(
        lines.some((l) => l.startsWith(`DEFINITION_VALUE_INVALID /pools/b${escaped} (`)),
        run.stderr,
      )
      assert.ok(!lines.some((l) => l.startsWith('Fleet is valid')), 'no line of its own')
      assert.ok(Math.max(...lines.map((l) => l.length)) < 1000, 'the 100,000-character key is cut on its line')
    })
  })

  describe('usage errors', () => {
    it("a missing argument keeps oclif's whole message and points to fleetkit help <command>", async () => {
      const run = await runFleetkit(['node', 'token', '--json'])
      assert.equal(run.code, 2)
      assertMatchesOutputSchema('node-token', run.json)
      assert.equal(run.json.code, 'USAGE_INVALID')
      assert.equal(run.json.message, 'Missing 1 required arg: node (node id)')
      assert.deepEqual(run.json.actions, ['fleetkit help node token', 'fleetkit runbook USAGE_INVALID'])
      const human = await runFleetkit(['runbook'])
      assert.equal(human.code, 2)
      assert.match(
        human.stderr,
        /^Error \(USAGE_INVALID\): Missing 1 required arg: code \(failure code, for example DEFINITION_INVALID\)$/m,
      )
      assert.match(human.stderr, /^ {2}fleetkit help runbook$/m)
      assert.doesNotMatch(human.stderr, /did not parse its arguments/)
    })

    it('a flag constraint and a bad flag value keep what oclif said, on one line', async () => {
      const verify = await runFleetkit(['release', 'verify', '--version', '1.0.0', '--json'])
      assert.equal(verify.code, 2)
      assert.equal(verify.json.message, 'Exactly one of the following must be provided: --dir, --url')
      assert.equal(verify.json.actions[0], 'fleetkit help release verify')
      const check = await runFleetkit(['node', 'check', 'x', '--timeout', '5000', '--json'])
      assert.equal(
        check.json.message,
        'Parsing --timeout: Expected an integer less than or equal to 3600 but received: 5000',
      )
    })
  })

  describe('--definition/-d and --state-dir', () => {
    it('validate: a FILE and a --definition that disagree is a usage error; agreeing ones are fine', async () => {
      const clash = await runFleetkit(['validate', 'examples/fleet.yaml', '--definition', 'other.yaml', '--json'])
      assert.equal(clash.code, 2)
      assertMatchesOutputSchema('validate', clash.json)
      assert.equal(clash.json.code, 'USAGE_INVALID')
      assert.match(clash.json.message, /FILE examples\/fleet\.yaml and --definition other\.yaml/)
      assert.ok(clash.json.actions.includes('fleetkit help validate'))
      const same = await runFleetkit(['validate', 'examples/fleet.yaml', '-d', './examples/fleet.yaml', '--json'])
      assert.equal(same.code, 0, same.stderr)
      // FLEETKIT_DEFINITION is a default: a FILE on the command line wins over it.
      const env = await runFleetkit(['validate', 'examples/fleet.yaml', '--json'], {
        env: { FLEETKIT_DEFINITION: 'other.yaml' },
      })
      assert.equal(env.code, 0, env.stderr)
    })

    it('-d is --definition on every command that reads the definition', async () => {
      const missing = join(dir, 'nope.yaml')
      for (const args of [['inventory'], ['seed', 'n1', '--kind', 'worker'], ['validate']]) {
        const run = await runFleetkit([...args, '-d', missing, '--json'], {
          env: { DATABASE_URL: undefined, FLEETKIT_STATE_DIR: join(dir, 'state') },
        })
        assert.equal(run.json.code, 'DEFINITION_MISSING', `${args.join(' ')}: ${JSON.stringify(run.json)}`)
      }
    })

    it('--state-dir names the state directory as FLEETKIT_STATE_DIR does (db status, ca init)', async () => {
      const stateDir = join(dir, 'state-flag')
      const status = await runFleetkit(['db', 'status', '--state-dir', stateDir, '--json'], {
        env: { DATABASE_URL: undefined },
      })
      assert.equal(status.code, 0, status.stderr)
      assert.ok(
        String(status.json.result.server.embedded.dataDir).startsWith(stateDir),
        JSON.stringify(status.json.result.server),
      )
      const ca = await runFleetkit(['ca', 'init', '--state-dir', stateDir, '--json'], {
        env: { FLEETKIT_PKI_DIR: undefined },
      })
      assert.equal(ca.code, 0, ca.stderr)
      assertMatchesOutputSchema('ca-init', ca.json)
      assert.equal(ca.json.result.pkiDir, join(stateDir, 'pki'))
      assert.ok(existsSync(join(stateDir, 'pki', 'ca.pem')))
    })
  })

  it('fleetkit version --json gives the version in the success envelope (schema/output/version.schema.json)', async () => {
    const run = await runFleetkit(['version', '--json'])
    assert.equal(run.code, 0, run.stderr)
    assertMatchesOutputSchema('version', run.json)
    const pkg = JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }
    assert.equal(run.json.result.version, pkg.version)
    assert.equal(run.json.result.node, process.version)
    const human = await runFleetkit(['version'])
    assert.equal(human.stdout.trim(), run.json.result.userAgent)
  })

  it('fleetkit autocomplete produces a bash completion that completes commands and flags', async () => {
    const cache = join(dir, 'cache')
    const run = await runFleetkit(['autocomplete', 'bash'], { env: { XDG_CACHE_HOME: cache } })
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, /fleetkit autocomplete script bash/)
    const script = await runFleetkit(['autocomplete', 'script', 'bash'], { env: { XDG_CACHE_HOME: cache } })
    assert.equal(script.code, 0, script.stderr)
    // What the operator appends to ~/.bashrc, run in a real bash, then completion asked for as bash would.
    const complete = (words: string[]) =>
      [
        script.stdout,
        `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}`,
        '_fleetkit_autocomplete; echo "${COMPREPLY[@]}"',
      ].join('\n')
    const commands = await runProcessOk('bash', ['-c', complete(['fleetkit', 'val'])])
    assert.equal(commands.stdout.trim(), 'validate')
    const flags = await runProcessOk('bash', ['-c', complete(['fleetkit', 'validate', '--sta'])])
    assert.equal(flags.stdout.trim(), '--state-dir')
  })
})
