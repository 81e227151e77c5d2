import assert from 'node:assert/strict'

import { parseDefinitionText } from '../../../src/definition/parse-text.js'
import { validateDefinitionText } from '../../../src/definition/validate-text.js'

describe('parsing definition text', () => {
  it('reads YAML and JSON alike', () => {
    assert.deepEqual(parseDefinitionText('a: 1\nb: [x]\n', 'f.yaml'), { ok: true, data: { a: 1, b: ['x'] } })
    assert.deepEqual(parseDefinitionText('{"a": 1}', 'f.json'), { ok: true, data: { a: 1 } })
  })

  it('keeps YAML 1.2 scalars: versions and on/off stay strings', () => {
    assert.deepEqual(parseDefinitionText('v: 1.2.3\ns: on\nd: 2026-01-01\n', 'f.yaml'), {
      ok: true,
      data: { v: '1.2.3', s: 'on', d: '2026-01-01' },
    })
  })

  it('refuses duplicate keys, an empty file and broken JSON with a line and column', () => {
    const dup = parseDefinitionText('fleet: a\nfleet: b\n', 'f.yaml')
    assert.equal(dup.ok, false)
    assert.deepEqual(dup.ok ? undefined : [dup.failure.line, /duplicate/i.test(dup.failure.reason)], [2, true])
    const empty = parseDefinitionText('\n\n', 'f.yaml')
    assert.deepEqual(empty.ok ? undefined : empty.failure.reason, 'the file is empty')
    const json = parseDefinitionText('{\n  "a": [1,\n  2}\n', 'f.json')
    assert.equal(json.ok, false)
    assert.deepEqual(json.ok ? undefined : [json.failure.line, json.failure.column], [3, 4])
  })

  it('a syntax error never quotes the source', () => {
    const secret = 'ghp_' + 'x'.repeat(36)
    const { errors } = validateDefinitionText(`fleet: x\n  bad: ${secret}\n: [\n`, 'f.yaml')
    assert.equal(errors[0]!.code, 'DEFINITION_UNREADABLE')
    assert.ok(!JSON.stringify(errors).includes(secret))
  })
})
