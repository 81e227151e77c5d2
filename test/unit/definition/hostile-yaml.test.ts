import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import type { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { COMPLEXITY_LIMITS, complexityProblem } from '../../../src/definition/complexity.js'
import { loadDefinition } from '../../../src/definition/load.js'
import { validateDefinitionText } from '../../../src/definition/validate-text.js'
import { packagePath } from '../../../src/package-root.js'

/** Nine levels of nine aliases each: 9^9 (387 million) strings once expanded, a few hundred bytes as text. */
export function aliasBomb(levels = 9): string {
  const lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
  for (let i = 1; i <= levels; i++)
    lines.push(`l${i}: &l${i} [${Array.from({ length: 9 }, () => `*l${i - 1}`).join(', ')}]`)
  return `${lines.join('\n')}\n`
}

const codes = (text: string) => validateDefinitionText(text, 'fleet.yaml').errors.map((e) => e.code)

describe('hostile YAML is refused fast (DEFINITION_TOO_COMPLEX)', () => {
  // No timing assertion: a bomb that expands to hundreds of millions of values proves it by finishing at all.
  it('an alias bomb', () => {
    assert.deepEqual(codes(aliasBomb()), ['DEFINITION_TOO_COMPLEX'])
    const [error] = validateDefinitionText(aliasBomb(), 'fleet.yaml').errors
    assert.match(error!.message, /more than 2000000 values.*alias/)
  })

  it('a bomb hidden under a valid-looking key, and thousands of aliases', () => {
    assert.deepEqual(codes(`${aliasBomb()}version: 1\nfleet: x\n`), ['DEFINITION_TOO_COMPLEX'])
    const wide = `a: &a [1]\nb: [${Array.from({ length: 3_000 }, () => '*a').join(',')}]\nc: &c [${Array.from({ length: 1000 }, () => '*a').join(',')}]\nd: [${Array.from({ length: 3000 }, () => '*c').join(',')}]\n`
    assert.deepEqual(codes(wide), ['DEFINITION_TOO_COMPLEX'])
  })

  it('nesting past the depth limit, shallow enough to parse or deep enough to exhaust the parser', () => {
    assert.deepEqual(codes(`a: ${'['.repeat(100)}${']'.repeat(100)}\n`), ['DEFINITION_TOO_COMPLEX'])
    assert.deepEqual(codes(`${'['.repeat(200_000)}${']'.repeat(200_000)}`), ['DEFINITION_TOO_COMPLEX'])
    assert.deepEqual(codes(`${'{"a":'.repeat(200_000)}1${'}'.repeat(200_000)}`), ['DEFINITION_TOO_COMPLEX'])
  })

  it('text over the size limit, unparsed', () => {
    assert.deepEqual(codes(`# ${'x'.repeat(COMPLEXITY_LIMITS.maxChars)}\n`), ['DEFINITION_TOO_COMPLEX'])
  })

  it('a file over the size limit is refused by its size, before it is read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetkit-hostile-'))
    try {
      const path = join(dir, 'fleet.yaml')
      writeFileSync(path, Buffer.alloc(COMPLEXITY_LIMITS.maxChars + 1, 0x23))
      await assert.rejects(
        loadDefinition(path),
        (e: FleetkitError) => e.code === 'DEFINITION_TOO_COMPLEX' && /larger than 16 MiB/.test(e.message),
      )
      writeFileSync(path, aliasBomb())
      await assert.rejects(
        loadDefinition(path),
        (e: FleetkitError) => e.code === 'DEFINITION_TOO_COMPLEX' && e.actions.some((a) => /anchors/.test(a)),
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('a file with no size to refuse by: a device that never ends is refused at the limit, a pipe is read', async () => {
    await assert.rejects(
      loadDefinition('/dev/zero'),
      (e: FleetkitError) => e.code === 'DEFINITION_TOO_COMPLEX' && /larger than 16 MiB/.test(e.message),
    )
    // `fleetkit validate --definition <(git show main:fleet.yaml)`: a pipe, whose stat says 0 bytes.
    const dir = mkdtempSync(join(tmpdir(), 'fleetkit-hostile-'))
    const fifo = join(dir, 'fleet.fifo')
    try {
      execFileSync('mkfifo', [fifo])
      const writer = writeFile(fifo, readFileSync(packagePath('examples', 'fleet.yaml')))
      const definition = await loadDefinition(fifo)
      await writer
      assert.ok(definition.nodes.length > 0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  // Under every limit, and each key one error: placing the errors was quadratic (the yaml package's
  // duplicate-key check per mapping, one search of the mapping per error), about two minutes for these
  // 40,000 keys. Linear, it is a few seconds; the timeout is generous for a loaded machine.
  it('a file of many unknown keys has every error placed without a quadratic search', function () {
    this.timeout(40_000)
    const example = readFileSync(packagePath('examples', 'fleet.yaml'), 'utf8')
    const keys = Array.from({ length: 40_000 }, (_, i) => `k${i}: ${i}\n`).join('')
    const errors = validateDefinitionText(example + keys, 'fleet.yaml').errors
    assert.equal(errors.length, 40_000)
    const exampleLines = example.split('\n').length - 1
    assert.deepEqual(
      [errors[0], errors.at(-1)].map((e) => [e!.code, e!.path, e!.line, e!.column]),
      [
        ['DEFINITION_FIELD_UNKNOWN', '/k0', exampleLines + 1, 1],
        ['DEFINITION_FIELD_UNKNOWN', '/k39999', exampleLines + 40_000, 1],
      ],
    )
  })

  // `ln -s /etc/shadow fleet.yaml` in a pull request: each line was an unknown field, printed whole in CI.
  it('a file that is no fleet definition (a link to /etc/shadow) is one error that echoes none of its lines', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetkit-hostile-'))
    try {
      const hash = '$y$j9T$abcdefghijklmnop$ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijk'
      writeFileSync(join(dir, 'shadow'), `root:${hash}:20228:0:99999:7:::\ndaemon:*:20228:0:99999:7:::\n`)
      symlinkSync(join(dir, 'shadow'), join(dir, 'fleet.yaml'))
      const error = await loadDefinition(join(dir, 'fleet.yaml')).then(
        () => assert.fail('a shadow file is no definition'),
        (e: FleetkitError) => e,
      )
      assert.equal(error.code, 'DEFINITION_INVALID')
      const errors = error.data!.errors as { code: string; path: string; message: string }[]
      assert.deepEqual(
        errors.map((e) => [e.code, e.path]),
        [['DEFINITION_VALUE_INVALID', '']],
      )
      assert.match(errors[0]!.message, /not a fleet definition.*neither "version" nor "fleet"/)
      const printed = JSON.stringify([error.message, error.data, error.detailLines, error.actions])
      for (const leaked of ['root', 'daemon', '20228', hash]) assert.ok(!printed.includes(leaked), leaked)
      // A definition with a typo keeps version or fleet, and still gets each unknown field by name.
      assert.deepEqual(
        validateDefinitionText('fleet: x\nflet: y\n', 'fleet.yaml')
          .errors.filter((e) => e.code === 'DEFINITION_FIELD_UNKNOWN')
          .map((e) => e.path),
        ['/flet'],
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('counts values, depth and shared nodes, and passes an ordinary definition', () => {
    const shared = [1, 2, 3]
    assert.equal(complexityProblem({ a: shared, b: shared }, { ...COMPLEXITY_LIMITS, maxValues: 9 }), undefined)
    assert.match(
      complexityProblem({ a: shared, b: shared }, { ...COMPLEXITY_LIMITS, maxValues: 8 })!,
      /more than 8 values/,
    )
    assert.match(complexityProblem({ a: { b: { c: {} } } }, { ...COMPLEXITY_LIMITS, maxDepth: 3 })!, /deeper than 3/)
    assert.equal(complexityProblem({ a: { b: { c: {} } } }, { ...COMPLEXITY_LIMITS, maxDepth: 4 }), undefined)
  })
})
