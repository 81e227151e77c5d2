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

  // JSON.parse keeps the last of two equal keys: `"publicSsh": false` read first, `true` applied.
  it('refuses a duplicate key in JSON as in YAML, with its line and column, however the key is written', () => {
    const yaml = validateDefinitionText('exposure:\n  publicSsh: false\n  publicSsh: true\n', 'f.yaml').errors[0]!
    for (const key of ['"publicSsh"', '"\\u0070ublicSsh"']) {
      const text = `{"exposure": {"publicSsh": false,\n  ${key}: true}, "nodes": [{"a": 1}, {"a": 2}]}`
      const [error] = validateDefinitionText(text, 'f.json').errors
      assert.deepEqual(
        [error!.code, error!.message, error!.line, error!.column],
        [yaml.code, 'duplicated mapping key at line 2, column 3', 2, 3],
      )
      // Read as YAML when the name does not say JSON: the same refusal.
      assert.equal(validateDefinitionText(text, 'fleet.yaml').errors[0]!.code, 'DEFINITION_UNREADABLE')
    }
    // Equal keys in different objects, a key equal to a value, and braces inside strings are no duplicates.
    const fine = '{"a": {"x": 1}, "b": {"x": "a"}, "c": ["{\\"x\\"", {"x": 2, "y": "}"}], "d": {"x": {"x": 1}}}'
    assert.equal(parseDefinitionText(fine, 'f.json').ok, true)
  })

  // js-yaml reads YAML 1.2's core schema: `<<: *defaults` was an ordinary key, so the pool lacked every merged
  // field and had an unknown `<<`, with no word of why.
  it('refuses a YAML merge key by name, at its key, and nothing else', () => {
    const text = 'version: 1\nfleet: x\ndefaults: &d\n  role: build\npools:\n  build:\n    <<: *d\n    stateful: true\n'
    const errors = validateDefinitionText(text, 'fleet.yaml').errors
    assert.deepEqual(
      errors.map((e) => [e.code, e.path, e.line, e.column]),
      [['DEFINITION_UNREADABLE', '/pools/build/<<', 7, 5]],
    )
    assert.match(errors[0]!.message, /^YAML merge keys \(<<\) are not supported/)
  })

  it('a syntax error never quotes the source', () => {
    const secret = 'ghp_' + 'x'.repeat(36)
    const { errors } = validateDefinitionText(`fleet: x\n  bad: ${secret}\n: [\n`, 'f.yaml')
    assert.equal(errors[0]!.code, 'DEFINITION_UNREADABLE')
    assert.ok(!JSON.stringify(errors).includes(secret))
  })
})
