import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

import { packagePath } from '../../../src/package-root.js'

/** Every module a file imports, as paths relative to src/ (bare and node: imports as written). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  return [...text.matchAll(/^(?:import|export)\s[^'"]*?from\s+'([^']+)'/gm)].map((m) => {
    const spec = m[1]!
    return spec.startsWith('.')
      ? relative(packagePath('src'), resolve(dirname(file), spec)).replace(/\.js$/, '.ts')
      : spec
  })
}

describe('protocol: what the agent bundle carries', () => {
  it('src/protocol imports only itself and the pure registry modules of src/checks, and those import nothing node-only', () => {
    // fleetkit-error classifies environment failures by SQLSTATE (store/sqlstate.ts: constants, no imports).
    const allowed = new Set([
      'checks/failure-codes.ts',
      'checks/check-id-pattern.ts',
      'checks/fleetkit-error.ts',
      'checks/environment-failures.ts',
      'store/sqlstate.ts',
    ])
    const dir = packagePath('src', 'protocol')
    const seen = new Set<string>()
    const queue = readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => `protocol/${f}`)
    while (queue.length > 0) {
      const module = queue.pop()!
      if (seen.has(module)) continue
      seen.add(module)
      for (const imported of importsOf(join(packagePath('src'), module))) {
        const ok =
          imported.startsWith('protocol/') ||
          allowed.has(imported) ||
          imported.startsWith('checks/codes/') ||
          imported === 'checks/failure-code-spec.ts'
        assert.ok(
          ok,
          `${module} imports ${imported}: the agent bundle must not carry it (node:, package files, other layers)`,
        )
        queue.push(imported)
      }
    }
    assert.ok(seen.has('checks/failure-codes.ts'), 'the registry is part of the contract')
  })
})
