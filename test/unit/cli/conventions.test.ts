import assert from 'node:assert/strict'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { suggestCodes, suggestCommands, suggestFlags } from '../../../src/cli/did-you-mean.js'
import { editDistance } from '../../../src/definition/did-you-mean.js'
import { chooseDefinitionPath, envWithStateDir } from '../../../src/cli/flags.js'
import { interruptedExitCode, onInterrupt, type SignalSource, type StopSignal } from '../../../src/cli/interrupt.js'
import { oneLineUsageMessage, usageError } from '../../../src/cli/usage-error.js'

const KNOWN = [
  'ca init',
  'checks',
  'db migrate',
  'db status',
  'db stop',
  'help',
  'release pack',
  'release sign',
  'release verify',
  'runbook',
  'seed',
  'validate',
  'version',
]

describe('cli: did you mean', () => {
  it('edit distance counts insertions, deletions and substitutions', () => {
    assert.equal(editDistance('valdate', 'validate'), 1)
    assert.equal(editDistance('', 'abc'), 3)
    assert.equal(editDistance('kitten', 'sitting'), 3)
  })

  it('suggests the closest commands first, and the commands under a typed topic', () => {
    assert.deepEqual(suggestCommands('valdate', KNOWN), ['validate'])
    assert.deepEqual(suggestCommands('db stat', KNOWN), ['db status', 'db stop'])
    assert.deepEqual(suggestCommands('release', KNOWN), ['release pack', 'release sign', 'release verify'])
    assert.deepEqual(suggestCommands('frobnicate', KNOWN), [])
  })

  it("suggests a command's own flags nearest a mistyped one, and the flags a prefix starts", () => {
    const flags = ['--json', '--limit', '--tags', '--resume', '--dry-run', '--debug']
    assert.deepEqual(suggestFlags('--limt', flags), ['--limit'])
    assert.deepEqual(suggestFlags('--resum', flags), ['--resume'])
    assert.deepEqual(suggestFlags('--dr', flags), ['--dry-run'])
    assert.deepEqual(suggestFlags('--frobnicate', flags), [])
    assert.deepEqual(suggestFlags('positional', flags), [])
  })

  it('suggests the registered failure codes nearest a mistyped one', () => {
    const codes = ['SYNC_PLAN_STALE', 'SYNC_LOCKED', 'USAGE_INVALID', 'DEFINITION_INVALID', 'DEFINITION_MISSING']
    assert.deepEqual(suggestCodes('sync_plan_stal', codes), ['SYNC_PLAN_STALE'])
    assert.deepEqual(suggestCodes('DEFINITON_INVALID', codes), ['DEFINITION_INVALID'])
    assert.deepEqual(suggestCodes('definition', codes), ['DEFINITION_INVALID', 'DEFINITION_MISSING'])
    assert.deepEqual(suggestCodes('NO_SUCH_CODE', codes), [])
  })
})

describe('cli: usage errors', () => {
  it("puts oclif's whole message on one line, without the --help hint", () => {
    assert.equal(
      oneLineUsageMessage('Missing 1 required arg:\nnode  node id\nSee more help with --help'),
      'Missing 1 required arg: node (node id)',
    )
    assert.equal(
      oneLineUsageMessage(
        'Missing 2 required args:\na  first\nb  second\n\nNote: --x allows multiple values.\nSee more help with --help',
      ),
      'Missing 2 required args: a (first), b (second) Note: --x allows multiple values.',
    )
    assert.equal(
      oneLineUsageMessage(
        'The following error occurred:\n  \x1b[2mExactly one of the following must be provided: --dir, --url\x1b[22m\nSee more help with --help',
      ),
      'Exactly one of the following must be provided: --dir, --url',
    )
    assert.equal(oneLineUsageMessage('Nonexistent flag: --nope\nSee more help with --help'), 'Nonexistent flag: --nope')
  })

  it('a USAGE_INVALID a command throws gets `fleetkit help <command>` before the runbook', () => {
    const e = usageError(new FleetkitError('USAGE_INVALID', '--output - and --json both want stdout'), 'seed')
    assert.deepEqual(e?.actions, ['fleetkit help seed', 'fleetkit runbook USAGE_INVALID'])
    assert.equal(usageError(new FleetkitError('DEFINITION_MISSING', 'x'), 'seed'), undefined)
    assert.equal(usageError(new Error('boom'), 'seed'), undefined)
  })

  it("an unknown flag names the command's nearest flags (oclif keeps them on its parse error)", () => {
    const parseError = Object.assign(new Error('Nonexistent flag: --limt\nSee more help with --help'), {
      flags: ['--limt'],
      parse: { input: { flags: { limit: {}, tags: {}, json: {}, secret: { hidden: true } } } },
    })
    const e = usageError(parseError, 'sync')
    assert.equal(e?.code, 'USAGE_INVALID')
    assert.equal(e?.message, 'Nonexistent flag: --limt; did you mean "--limit"?')
    assert.deepEqual(e?.data, { suggestions: ['--limit'] })
    const hidden = Object.assign(new Error('Nonexistent flag: --secre'), {
      flags: ['--secre'],
      parse: { input: { flags: { secret: { hidden: true } } } },
    })
    assert.equal(usageError(hidden, 'sync')?.message, 'Nonexistent flag: --secre')
  })
})

describe('cli: shared flags', () => {
  const raw = (...flags: string[]) => flags.map((flag) => ({ type: 'flag', flag }))

  it('a FILE and --definition given together must name the same file', () => {
    assert.equal(
      chooseDefinitionPath({ file: undefined, flag: './fleet.yaml', raw: [], commandId: 'validate' }),
      './fleet.yaml',
    )
    assert.equal(
      chooseDefinitionPath({ file: 'a.yaml', flag: 'from-env.yaml', raw: [], commandId: 'validate' }),
      'a.yaml',
    )
    assert.equal(
      chooseDefinitionPath({ file: 'a.yaml', flag: './a.yaml', raw: raw('definition'), commandId: 'validate' }),
      'a.yaml',
    )
    assert.throws(
      () => chooseDefinitionPath({ file: 'a.yaml', flag: 'b.yaml', raw: raw('definition'), commandId: 'validate' }),
      (error: unknown) => {
        assert.ok(error instanceof FleetkitError)
        assert.equal(error.code, 'USAGE_INVALID')
        assert.ok(error.actions.includes('fleetkit help validate'))
        return true
      },
    )
  })

  it('--state-dir is laid over the environment the libraries read', () => {
    assert.deepEqual(envWithStateDir('/s', { HOME: '/h' }), { HOME: '/h', FLEETKIT_STATE_DIR: '/s' })
    const env = { FLEETKIT_STATE_DIR: '/from-env' }
    assert.equal(envWithStateDir(undefined, env), env)
  })
})

describe('cli: interruption', () => {
  function fakeProcess() {
    const listeners = new Map<StopSignal, Set<() => void>>()
    const exits: number[] = []
    const source: SignalSource = {
      on: (event, listener) => listeners.set(event, (listeners.get(event) ?? new Set()).add(listener)),
      off: (event, listener) => listeners.get(event)?.delete(listener),
      exit: ((code: number) => {
        exits.push(code)
      }) as SignalSource['exit'],
    }
    const send = (event: StopSignal) => {
      for (const l of [...(listeners.get(event) ?? [])]) l()
    }
    return { source, send, exits, count: () => [...listeners.values()].reduce((n, s) => n + s.size, 0) }
  }

  it('the first signal aborts with COMMAND_INTERRUPTED (130 for SIGINT, 143 for SIGTERM); a second exits at once', () => {
    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const) {
      const proc = fakeProcess()
      const interruption = onInterrupt({ process: proc.source })
      proc.send(signal)
      assert.equal(interruption.signal.aborted, true)
      assert.equal(interruptedExitCode(interruption.signal.reason), code)
      assert.deepEqual(proc.exits, [])
      proc.send(signal)
      assert.deepEqual(proc.exits, [code])
      interruption.dispose()
      assert.equal(proc.count(), 0, 'dispose removes the listeners')
    }
  })

  it('other errors have no interruption exit code', () => {
    assert.equal(interruptedExitCode(new FleetkitError('USAGE_INVALID', 'x')), undefined)
    assert.equal(interruptedExitCode(new Error('x')), undefined)
  })
})

describe('cli: the docs rule knows the commands of the plugins fleetkit ships', () => {
  it('reads each oclif plugin listed in package.json from its own manifest', async () => {
    const { mkdtempSync, mkdirSync, rmSync, writeFileSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const { loadManifestIds } = await import('../../../features/support/rules/doc-commands.js')
    const root = mkdtempSync(join(tmpdir(), 'fleetkit-manifest-'))
    try {
      writeFileSync(join(root, 'oclif.manifest.json'), JSON.stringify({ commands: { validate: {}, 'db:status': {} } }))
      writeFileSync(
        join(root, 'package.json'),
        JSON.stringify({ oclif: { plugins: ['@oclif/plugin-autocomplete', '@oclif/plugin-absent'] } }),
      )
      mkdirSync(join(root, 'node_modules', '@oclif', 'plugin-autocomplete'), { recursive: true })
      writeFileSync(
        join(root, 'node_modules', '@oclif', 'plugin-autocomplete', 'oclif.manifest.json'),
        JSON.stringify({ commands: { autocomplete: {}, 'autocomplete:script': {} } }),
      )
      assert.deepEqual([...(await loadManifestIds(root))].sort(), [
        'autocomplete',
        'autocomplete:script',
        'db:status',
        'validate',
      ])
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})
