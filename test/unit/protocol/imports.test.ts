import assert from 'node:assert/strict'

import { closureOf, folderOf, moduleGraph } from '../../support/import-graph.js'
import { packagePath } from '../../../src/package-root.js'

// The layer order of all of src/ is test/unit/layers.test.ts; this file is what the agent bundle
// (scripts/build-agent.mjs: src/agent/main.ts and everything it imports, one file) may carry.
const graph = moduleGraph(packagePath('src'))

/** The pure registry modules of src/checks: constants and classification, no node: and no package files. */
function isPureChecks(module: string): boolean {
  return (
    [
      'checks/failure-codes.ts',
      'checks/check-id-pattern.ts',
      'checks/fleetkit-error.ts',
      'checks/environment-failures.ts',
      'checks/sqlstate.ts',
      'checks/failure-code-spec.ts',
    ].includes(module) || module.startsWith('checks/codes/')
  )
}

describe('protocol: what the agent bundle carries', () => {
  it('src/protocol imports only itself and the pure registry modules of src/checks, and those import nothing node-only', () => {
    const entries = [...graph.modules.keys()].filter((m) => m.startsWith('protocol/'))
    for (const module of closureOf(graph, entries)) {
      for (const { target, line } of graph.modules.get(module)!) {
        const ok = target.startsWith('protocol/') || isPureChecks(target)
        assert.ok(
          ok,
          `${module}:${line} imports ${target}: the agent bundle must not carry it (node:, package files, other layers)`,
        )
      }
    }
    assert.ok(closureOf(graph, entries).has('checks/failure-codes.ts'), 'the registry is part of the contract')
  })

  it('the agent bundle reaches only src/agent, protocol, the pure checks, config, log, fs and four pure modules', () => {
    // pki/trust-bundle-digest.ts and pki/recovery-signature.ts (node:crypto only), pki/pem.ts and definition/grammar.ts
    // (no imports) are shared with the CLI on purpose: one digest, one signed message, one PEM reader and one grammar on both ends. Nothing may reach package-root.ts:
    // the bundle is one file, with no schema/ or docs/ beside it.
    const allowedFolders = new Set(['agent', 'protocol', 'config', 'log', 'fs'])
    const allowedModules = new Set([
      'pki/trust-bundle-digest.ts',
      'pki/recovery-signature.ts',
      'pki/pem.ts',
      'definition/grammar.ts',
    ])
    const reached = closureOf(graph, ['agent/main.ts'])
    assert.ok(reached.has('agent/run-loop.ts'), 'the closure follows imports')
    for (const module of reached) {
      const ok = allowedFolders.has(folderOf(module)) || allowedModules.has(module) || isPureChecks(module)
      assert.ok(ok, `the agent bundle reaches ${module}: it must not carry it`)
    }
  })
})
