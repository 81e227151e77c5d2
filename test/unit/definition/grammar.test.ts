import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'

import { GRAMMAR, type GrammarName, isIpv6Address, isValid } from '../../../src/definition/grammar.js'
import { FLEET_SCHEMA_PATH } from '../../../scripts/generate-fleet-validator.js'
import { GRAMMAR_FIELDS } from '../../../src/definition/value-grammar.js'

type SchemaNode = Record<string, unknown>

/** Every `pattern` in the schema, at the instance paths it applies to (`*` any index or key, `#` a key). */
function schemaPatterns(schema: SchemaNode): Array<{ at: string; node: SchemaNode }> {
  const found: Array<{ at: string; node: SchemaNode }> = []
  const resolve = (ref: string) =>
    ref
      .slice(2)
      .split('/')
      .reduce<SchemaNode>((o, k) => o[k] as SchemaNode, schema)
  const walk = (node: SchemaNode, at: string, depth: number) => {
    if (depth > 20) return
    if (typeof node.$ref === 'string') walk(resolve(node.$ref), at, depth + 1)
    if (typeof node.pattern === 'string') found.push({ at, node })
    for (const [key, child] of Object.entries((node.properties ?? {}) as Record<string, SchemaNode>))
      walk(child, `${at}/${key}`, depth + 1)
    if (node.items) walk(node.items as SchemaNode, `${at}/*`, depth + 1)
    if (node.additionalProperties && typeof node.additionalProperties === 'object')
      walk(node.additionalProperties as SchemaNode, `${at}/*`, depth + 1)
    if (node.propertyNames) walk(node.propertyNames as SchemaNode, `${at}/#`, depth + 1)
  }
  walk(schema, '', 0)
  return found
}

describe('one grammar per value (src/definition/grammar.ts)', () => {
  const schema = JSON.parse(readFileSync(FLEET_SCHEMA_PATH, 'utf8')) as SchemaNode
  const patterns = schemaPatterns(schema)

  it("every schema pattern is a grammar's, tagged with its name, with the grammar's maxLength", () => {
    assert.ok(patterns.length >= 25)
    for (const { at, node } of patterns) {
      const tag = /^grammar:(\w+)/.exec(String(node.$comment))
      assert.ok(tag, `${at}: the pattern has no grammar: tag`)
      const grammar = GRAMMAR[tag[1] as GrammarName] as { pattern: string; maxLength?: number }
      assert.ok(grammar, `${at}: no grammar ${tag[1]}`)
      assert.equal(node.pattern, grammar.pattern, `${at}: the schema's pattern is not grammar ${tag[1]}'s`)
      assert.equal(node.maxLength, grammar.maxLength, `${at}: maxLength`)
    }
  })

  it('validate checks the full grammar at exactly the places the schema checks its pattern', () => {
    const fromSchema = patterns
      .map(({ at, node }) => `${at} ${/^grammar:(\w+)/.exec(String(node.$comment))![1]}`)
      .sort()
    const fromTable = GRAMMAR_FIELDS.map(([at, name]) => `${at} ${name}`).sort()
    assert.deepEqual(fromTable, fromSchema)
  })

  it('refuses what the regex alone cannot: unparseable hosts, mislabelled keys, malformed IPv6', () => {
    assert.equal(isValid('httpsUrl', 'https://gateway.fleet.internal:8443/agent'), true)
    assert.equal(isValid('httpsUrl', 'https://1.2.3.999'), false)
    assert.equal(isValid('httpsUrl', 'https://a:65536'), false)
    assert.equal(isValid('httpsUrl', 'https://a/../etc'), false)
    assert.equal(isValid('httpsUrl', 'http://a'), false)
    assert.equal(isValid('endpointUrl', 'http://127.0.0.1:4000'), true)
    const ed25519 = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPdRl3VEfS8Ir661qc0rFEACHmzWcHU6RE3gIZhMM3sS'
    assert.equal(isValid('sshPublicKey', `${ed25519} ops@fleet.internal`), true)
    assert.equal(isValid('sshPublicKey', ed25519.replace('ssh-ed25519', 'ssh-rsa')), false)
    assert.equal(isValid('sshPublicKey', `${ed25519} two words`), false)
    assert.equal(isValid('cidr', 'fd00::/8'), true)
    assert.equal(isValid('cidr', 'fd00:::/8'), false)
    assert.equal(isValid('cidr', '256.0.0.0/8'), false)
    assert.equal(isValid('sshHost', '::1'), true)
    assert.equal(isValid('sshHost', '1:2:3'), false)
    assert.equal(isValid('sshHost', '-oProxyCommand=x'), false)
    assert.equal(isValid('mountPoint', '/srv/../etc'), false)
    assert.equal(isValid('device', '/dev/../etc/shadow'), false)
    assert.equal(isValid('releaseVersion', '1.2.3+build'), false)
    assert.equal(isValid('releaseVersion', '1.2.3-rc.1'), true)
    for (const ok of ['::', '::1', '2001:db8::1', '::ffff:192.0.2.1', '1:2:3:4:5:6:7:8'])
      assert.equal(isIpv6Address(ok), true, ok)
    for (const bad of [':::', '1::2::3', '1:2:3:4:5:6:7:8:9', 'g::', '::ffff:1.2.3.256', '1.2.3.4'])
      assert.equal(isIpv6Address(bad), false, bad)
  })

  it('every grammar has words, never a regex, for its messages', () => {
    for (const [name, grammar] of Object.entries(GRAMMAR)) {
      assert.ok(grammar.words.length > 10 && !grammar.words.includes('^') && !grammar.words.includes('$'), name)
    }
  })
})
