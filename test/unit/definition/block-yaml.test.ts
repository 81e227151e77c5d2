// The block-YAML fast path against js-yaml, the reader it stands in for: whatever the fast path
// accepts it must read exactly as js-yaml does (values, types, -0, key order), and what it gives up
// on js-yaml reads. The shipped examples, the fixtures and the bench's 5,000-node definition must take
// the fast path (else the speed is gone without a failing test); generated documents, their
// mutations, and odd scalars check the equality where the two could differ.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

import { load } from 'js-yaml'

import { generateDefinition } from '../../../bench/validate.js'
import { readBlockYaml } from '../../../src/definition/block-yaml.js'
import { parseDefinitionText } from '../../../src/definition/parse-text.js'
import { type Rng, seededRng, unitInterval } from '../../../src/config/rng.js'
import { packagePath } from '../../../src/package-root.js'

/** js-yaml's reading of TEXT, or the fact that it refused it. */
function jsYaml(text: string): { value: unknown } | { error: string } {
  try {
    return { value: load(text) }
  } catch (error) {
    return { error: (error as Error).message }
  }
}

/** When the fast path accepts TEXT, js-yaml accepts it too and reads the same; returns whether it did. */
function agrees(text: string): boolean {
  const fast = readBlockYaml(text)
  if (fast === undefined) return false
  const reference = jsYaml(text)
  assert.ok('value' in reference, `the fast path accepted what js-yaml refuses:\n${text}\n${JSON.stringify(reference)}`)
  assert.deepStrictEqual(fast.value, reference.value, `the fast path read differently:\n${text}`)
  // Key order too: the summary and errors list things in the file's order.
  assert.equal(JSON.stringify(fast.value), JSON.stringify(reference.value), text)
  return true
}

const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(unitInterval(rng) * items.length)]!
const chance = (rng: Rng, p: number) => unitInterval(rng) < p

const KEYS = ['id', 'pool', 'ssh', 'host', 'port', 'a.b', 'x-y', '_z', 'k8', 'cidrs', 'a/b', 'Yes']
/** Keys js-yaml reads as another type's string, or sets specially: the fast path gives up on them. */
const ODD_KEYS = ['true', '1', 'null', '0x1', '__proto__', '1.5', 'on']
/** Scalars the fast path reads (most values drawn), then those where it and js-yaml could differ or it gives up. */
const PLAIN_SCALARS = [
  '',
  'plain',
  'two words',
  'x-y',
  '10.0.0.1',
  '192.168.0.0/16',
  '1.2.3',
  'cx32',
  'fsn1',
  '22',
  '3.5',
  '[a, b]',
  '{ cpu: 4 }',
  '{ id: ubuntu, version: "24.04" }',
  `['a, b', "c", 'it''s']`,
]
const ODD_SCALARS = [
  '["unclosed]',
  '[a, "b\\"c"]',
  '[a,]',
  '[a, #b]',
  "{ a: 'x' y }",
  '[ ]',
  '{ "k": v }',
  '{ a: [b] }',
  '-1',
  '+12',
  '0',
  '-0',
  '007',
  '-0.0',
  '1.10',
  '0.1',
  '1234567890123456',
  '12345678901234567890',
  '1e3',
  '.5',
  '5.',
  '0x1f',
  '0o17',
  '0b101',
  '.inf',
  '-.Inf',
  '.NaN',
  'null',
  'Null',
  '~',
  'true',
  'False',
  'TRUE',
  'yes',
  'on',
  'tRue',
  "'quoted'",
  "'it''s'",
  '"double"',
  '"with \\" escape"',
  '"a # b"',
  "'a: b'",
  'a #comment',
  'a#b',
  'a:b',
  'a: b',
  'b:',
  '-x',
  '- x',
  '?x',
  ':x',
  '[a, b]',
  '[1, 2.5, null]',
  '[]',
  '[a, [b]]',
  "[a, 'b']",
  '{ cpu: 4, mem: 8 }',
  '{}',
  '{a: 1, a: 2}',
  '{ a: b: c }',
  '&anchor x',
  '*alias',
  '!!str 1',
  '|',
  '>',
  '%x',
  '@x',
  '`x`',
  'ssh-ed25519 AAAAC3Nza ops@x',
  'https://x.example:8443/p',
  '2024-01-01',
  '12:30',
  '<<',
  'a,b',
  'x]',
  'é',
  '"unclosed',
  "'unclosed",
]

const scalar = (rng: Rng) => pick(rng, chance(rng, 0.8) ? PLAIN_SCALARS : ODD_SCALARS)

/** A block document of depth up to DEPTH, indented by STEP, with comments and blank lines here and there. */
function generate(rng: Rng, depth: number, indent: number, step: number): string[] {
  const pad = ' '.repeat(indent)
  const lines: string[] = []
  const count = 1 + Math.floor(unitInterval(rng) * 4)
  const asSequence = chance(rng, 0.3)
  const used = new Set<string>()
  for (let i = 0; i < count; i++) {
    if (chance(rng, 0.1)) lines.push(chance(rng, 0.5) ? '' : `${pad}# a comment: with - marks`)
    const nested = depth > 0 && chance(rng, 0.4)
    if (asSequence) {
      if (nested && chance(rng, 0.6)) {
        // `- key: value` with the rest of the mapping under it.
        const inner = generateMapping(rng, depth - 1, indent + 2, step)
        lines.push(`${pad}- ${inner[0]!.trimStart()}`, ...inner.slice(1))
      } else if (nested) {
        lines.push(`${pad}-`, ...generate(rng, depth - 1, indent + step, step))
      } else {
        lines.push(`${pad}- ${scalar(rng)}${chance(rng, 0.1) ? '  # trailing' : ''}`)
      }
    } else {
      let key = pick(rng, chance(rng, 0.95) ? KEYS : ODD_KEYS)
      if (used.has(key) && chance(rng, 0.8)) key = `${key}${i}`
      used.add(key)
      if (nested) {
        // A sequence may sit at its key's own indentation.
        const sameIndent = chance(rng, 0.3)
        const inner = generate(rng, depth - 1, sameIndent ? indent : indent + step, step)
        lines.push(`${pad}${key}:${chance(rng, 0.1) ? ' # note' : ''}`, ...inner)
      } else {
        lines.push(`${pad}${key}: ${scalar(rng)}`)
      }
    }
  }
  return lines
}

function generateMapping(rng: Rng, depth: number, indent: number, step: number): string[] {
  for (;;) {
    const lines = generate(rng, depth, indent, step)
    if (!lines[0]!.trimStart().startsWith('-') && lines[0]!.trim() !== '' && !lines[0]!.trimStart().startsWith('#'))
      return lines
  }
}

const MUTATIONS = [
  ' ',
  ':',
  '-',
  '#',
  '\t',
  "'",
  '"',
  '[',
  ']',
  '{',
  '}',
  ',',
  '\n',
  '&',
  '*',
  '!',
  '|',
  '>',
  '?',
  '\r',
  '\\',
  'x',
  '0',
  '.',
]

function mutate(rng: Rng, text: string): string {
  const at = Math.floor(unitInterval(rng) * (text.length + 1))
  switch (Math.floor(unitInterval(rng) * 4)) {
    case 0:
      return text.slice(0, at) + text.slice(at + 1)
    case 1:
      return text.slice(0, at) + pick(rng, MUTATIONS) + text.slice(at)
    case 2: {
      // A line's indentation moved by one.
      const lines = text.split('\n')
      const index = Math.floor(unitInterval(rng) * lines.length)
      lines[index] = chance(rng, 0.5) ? ` ${lines[index]}` : lines[index]!.replace(/^ /, '')
      return lines.join('\n')
    }
    default: {
      const lines = text.split('\n')
      const index = Math.floor(unitInterval(rng) * lines.length)
      lines.splice(index, 0, lines[index]!)
      return lines.join('\n')
    }
  }
}

describe('block-YAML fast path', function () {
  it('reads the shipped examples, the host policy, the definition fixtures and the 5,000-node bench definition as js-yaml does', function () {
    const files = [
      ...readdirSync(packagePath('examples'))
        .filter((name) => name.endsWith('.yaml'))
        .map((name) => join(packagePath('examples'), name)),
      join(packagePath('test', 'fixtures', 'definitions'), 'valid.yaml'),
      packagePath('policy', 'host-policy.yaml'),
    ]
    for (const file of files) assert.ok(agrees(readFileSync(file, 'utf8')), `${file} did not take the fast path`)
    assert.ok(agrees(generateDefinition(5000, 20)), 'the bench definition did not take the fast path')
    // The other fixtures: equal where taken (some are malformed on purpose).
    const fixtures = packagePath('test', 'fixtures', 'definitions')
    for (const name of readdirSync(fixtures).filter((n) => n.endsWith('.yaml')))
      agrees(readFileSync(join(fixtures, name), 'utf8'))
  })

  it('reads every generated block document it accepts as js-yaml does, and accepts many', function () {
    const rng = seededRng('block-yaml-documents')
    let accepted = 0
    const total = 1500
    for (let i = 0; i < total; i++) {
      const step = pick(rng, [2, 2, 4, 3])
      const text = `${chance(rng, 0.1) ? '---\n' : ''}${generateMapping(rng, 3, 0, step).join('\n')}\n`
      if (agrees(text)) accepted++
    }
    // One value in five is drawn from the odd ones (anchors, escapes, exponents), where it often gives
    // up. A fast path that gave up on everything would pass the equality alone.
    assert.ok(accepted > total * 0.3, `only ${accepted} of ${total} generated documents took the fast path`)
  })

  it('reads every mutated document it accepts as js-yaml does (a byte dropped or added, a line moved or repeated)', function () {
    const rng = seededRng('block-yaml-mutations')
    const base = readFileSync(packagePath('examples', 'fleet.yaml'), 'utf8')
    for (let i = 0; i < 1500; i++) {
      let text = chance(rng, 0.5) ? base : `${generateMapping(rng, 3, 0, 2).join('\n')}\n`
      const times = 1 + Math.floor(unitInterval(rng) * 3)
      for (let m = 0; m < times; m++) text = mutate(rng, text)
      agrees(text)
    }
  })

  it('reads a plain scalar as the core schema does, or gives up', function () {
    const alphabet = '0123456789.+-eExXoO_:abfinNAlsTtruF~ #\'"'
    const rng = seededRng('block-yaml-scalars')
    let accepted = 0
    for (let i = 0; i < 20_000; i++) {
      const length = 1 + Math.floor(unitInterval(rng) * 7)
      let scalar = ''
      for (let c = 0; c < length; c++) scalar += pick(rng, [...alphabet])
      if (agrees(`k: ${scalar}\nl: [${scalar}]\n`) || agrees(`k: ${scalar}\n`)) accepted++
    }
    assert.ok(accepted > 5000, `only ${accepted} scalars took the fast path`)
    for (const [text, value] of [
      ['-0', -0],
      ['-0.0', -0],
      ['007', 7],
      ['1.10', 1.1],
      ['yes', 'yes'],
      ['TRUE', true],
      ['~', null],
      ['0b101', '0b101'],
      ['10.0.0.1', '10.0.0.1'],
    ] as const) {
      const fast = readBlockYaml(`k: ${text}\n`)
      assert.ok(fast, text)
      assert.ok(
        Object.is((fast.value as { k: unknown }).k, value),
        `${text}: ${String((fast.value as { k: unknown }).k)}`,
      )
    }
  })

  it('gives up on what it does not read, and the parse is js-yaml’s then (errors placed, limits applied)', function () {
    for (const text of [
      'a: &x 1\nb: *x\n',
      'a: !!str 1\n',
      'a: |\n  text\n',
      'a: "tab\\tescape"\n',
      'a: 1e3\n',
      'a:\tb\n',
      'a: b\r\n',
      'true: x\n',
      '__proto__: {}\n',
      'a: 1\na: 2\n',
      'a: x\n  continued\n',
      '--- \na: 1\n---\nb: 2\n',
      'a: [b, [c]]\n',
      'plain scalar document\n',
      '- a\nb: 1\n',
      'a:\n- - b\n',
      '  a: indented root\n',
    ])
      assert.equal(readBlockYaml(text), undefined, text)
    // Through parseDefinitionText: the duplicate key is js-yaml's error, with its line.
    const duplicate = parseDefinitionText('a: 1\nb:\n  c: 1\n  c: 2\n', 'fleet.yaml')
    assert.equal(duplicate.ok, false)
    if (!duplicate.ok)
      assert.deepEqual([duplicate.failure.line, /duplicated/.test(duplicate.failure.reason)], [4, true])
    // Nesting past the limit: js-yaml's own limit, not the fast path's recursion.
    const deep = Array.from({ length: 80 }, (_, i) => `${' '.repeat(i)}k:`).join('\n') + ' 1\n'
    const parsed = parseDefinitionText(deep, 'fleet.yaml')
    assert.equal(parsed.ok, false)
    if (!parsed.ok) assert.equal(parsed.failure.tooComplex, true)
  })
})
