import assert from 'node:assert/strict'

import { type CheckIdEntry, findCheckEntry, hasOwner, loadCheckIds } from '../../../src/checks/check-ids.js'
import { FAILURE_CODES } from '../../../src/checks/failure-codes.js'
import { FleetkitError, toFleetkitError } from '../../../src/checks/fleetkit-error.js'
import { parseRegistry } from '../../../features/support/rules/code-usage.js'
import { readTree } from '../../../features/support/rules/source-files.js'
import { parseRunbooks } from '../../../src/checks/runbooks.js'
import { packageRoot } from '../../../src/package-root.js'

describe('failure-code registry', () => {
  it('the text the rules read agrees with the registry the CLI imports', async () => {
    // Catches a family file that is not spread into failure-codes.ts, or an entry the rule parser misreads.
    const files = await readTree(packageRoot, ['src'], /\.ts$/)
    const parsed = parseRegistry(files)
    assert.deepEqual(parsed.map((c) => c.code).sort(), Object.keys(FAILURE_CODES).sort())
    for (const c of parsed) assert.equal(c.person, FAILURE_CODES[c.code as keyof typeof FAILURE_CODES].person, c.code)
  })

  it('every code is UPPER_SNAKE with a one-line summary', () => {
    for (const [code, spec] of Object.entries(FAILURE_CODES)) {
      assert.match(code, /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/)
      assert.ok(spec.summary.length > 0 && !spec.summary.includes('\n'), code)
    }
  })
})

describe('FleetkitError', () => {
  it('always ends its actions with the runbook command and takes the exit code from the registry', () => {
    const e = new FleetkitError('USAGE_INVALID', 'bad flag', { actions: ['fleetkit help'] })
    assert.deepEqual(e.actions, ['fleetkit help', 'fleetkit runbook USAGE_INVALID'])
    assert.equal(e.exitCode, 2)
  })

  it('turns an unexpected error into INTERNAL_ERROR with its first line only', () => {
    const e = toFleetkitError(new Error('boom\n    at somewhere'))
    assert.equal(e.code, 'INTERNAL_ERROR')
    assert.equal(e.message, 'boom')
    assert.equal(e.exitCode, 70)
  })

  it('keeps a registered code carried by another error', () => {
    const err = Object.assign(new Error('not found'), { code: 'RUNBOOK_CODE_UNKNOWN' })
    assert.equal(toFleetkitError(err).code, 'RUNBOOK_CODE_UNKNOWN')
  })

  it('does not mistake a system error code for a failure code', () => {
    const err = Object.assign(new Error('no such file'), { code: 'ENOENT' })
    assert.equal(toFleetkitError(err).code, 'INTERNAL_ERROR')
  })
})

describe('runbooks parser', () => {
  const doc = [
    '# Runbooks',
    'fleetkit has 2 failure codes; 1 needs a person.',
    '## Things (A_B, C_D)',
    '**Meaning**: m',
    '**Confirm**: `fleetkit checks`',
    '**Fix**: f',
    '**Escalate**: e',
    '- `A_B`: first.',
    '- `C_D`: second.',
  ].join('\n')

  it('reads sections, their fields, one line per code and the stated count', () => {
    const runbooks = parseRunbooks(doc)
    assert.equal(runbooks.sections.length, 1)
    const [section] = runbooks.sections
    assert.equal(section!.confirm, '`fleetkit checks`')
    assert.deepEqual([...section!.codes.keys()], ['A_B', 'C_D'])
    assert.deepEqual(runbooks.statedCount, { codes: 2, person: 1 })
  })
})

describe('check-ID registry', () => {
  const entries: CheckIdEntry[] = [
    { id: 'host:*', meaning: 'any host check', owner: { manual: 'someone' } },
    { id: 'host:fire*', meaning: 'fire checks', owner: { repair: { tag: 'fire' } } },
    { id: 'host:firewall', meaning: 'the firewall', owner: { repair: { tag: 'firewall' } } },
  ]

  it('gives an ID to its most specific entry: exact, then the longest prefix', () => {
    assert.equal(findCheckEntry(entries, 'host:firewall')?.id, 'host:firewall')
    assert.equal(findCheckEntry(entries, 'host:firework')?.id, 'host:fire*')
    assert.equal(findCheckEntry(entries, 'host:disk')?.id, 'host:*')
    assert.equal(findCheckEntry(entries, 'agent:unit'), undefined)
  })

  it('every entry of schema/check-ids.json has an owner', () => {
    for (const entry of loadCheckIds()) assert.ok(hasOwner(entry), entry.id)
  })

  it('an empty manual reason or an empty repair is no owner', () => {
    assert.equal(hasOwner({ id: 'a:b', meaning: '', owner: { manual: ' ' } }), false)
    assert.equal(hasOwner({ id: 'a:b', meaning: '', owner: { repair: { tag: '' } } }), false)
  })
})
