// One owner of the pool (issue 20, item 6): a command opens the state database once, through the
// base command's context (withState, issue 36), and hands the pool down; the lifecycle functions
// take it and never open one themselves, and import statically (a lazy import() would hide what a
// module depends on from the layer check).
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'

import { packagePath } from '../../../src/package-root.js'

function sources(dir: string): { path: string; text: string }[] {
  return readdirSync(packagePath('src', dir), { withFileTypes: true, recursive: true })
    .filter((f) => f.isFile() && f.name.endsWith('.ts'))
    .map((f) => {
      const path = join(f.parentPath, f.name)
      return { path: relative(packagePath(), path), text: readFileSync(path, 'utf8') }
    })
}

/** The code of a file without its comments, so a comment that names openDatabase is no finding. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '')
}

describe('one owner of the pool', () => {
  it('no module of src/lifecycle/ opens the database or imports lazily', () => {
    const findings = sources('lifecycle').flatMap(({ path, text }) => [
      ...(/\bopenDatabase\b/.test(code(text)) ? [`${path}: openDatabase`] : []),
      ...(/\bimport\s*\(/.test(code(text)) ? [`${path}: import()`] : []),
    ])
    assert.deepEqual(findings, [])
  })

  it('a command opens the database at most once (withState, one call)', () => {
    assert.deepEqual(stateFindings(sources('commands')), [])
  })

  it("each command that opens the state does it through the base command's context, and takes its actor from it", () => {
    const commands = sources('commands')
    assert.deepEqual(contextFindings(commands), [])
    for (const path of Object.keys(OWN_POOL))
      assert.ok(
        commands.some((c) => c.path === path && !/\bthis\.with(?:Deferred)?State\s*\(/.test(c.text)),
        `${path} is excused: it must still exist and keep its own pool (else drop it from OWN_POOL)`,
      )
  })

  describe('the checker', () => {
    const file = (text: string) => [{ path: 'src/commands/x.ts', text }]

    it('finds a second opening, a database opened beside the context, and a pool or actor found elsewhere', () => {
      assert.deepEqual(stateFindings(file('await this.withState(a, w)\nawait this.withState(b, w)')), [
        'src/commands/x.ts: 2 opens (withState(, withState()',
      ])
      assert.deepEqual(
        contextFindings(
          file(
            [
              "const { openDatabase } = await import('../store/database.js')",
              'const database = await openDatabase({ progress })',
              'await admitNode({ pool: database.pool, actor: actorOf(process.env) })',
            ].join('\n'),
          ),
        ),
        [
          'src/commands/x.ts: opens the state itself (openDatabase, store/database.js); use this.withState',
          'src/commands/x.ts: has a pool without this.withState',
          'src/commands/x.ts: finds its actor itself (actorOf); take `actor` from the context',
        ],
      )
      assert.deepEqual(
        contextFindings(
          file("import { withDatabase } from '../cli/with-database.js'\nawait withDatabase(o, (pool) => sweep(pool))"),
        ),
        [
          'src/commands/x.ts: opens the state itself (withDatabase, cli/with-database.js); use this.withState',
          'src/commands/x.ts: has a pool without this.withState',
        ],
      )
    })

    it('passes a command that takes its pool and actor from withState, and a comment that names the old ways', () => {
      const good = file(
        '// no openDatabase, no actorOf here\nawait this.withState({ stateDir }, ({ pool, actor }) => park({ pool, actor }))',
      )
      assert.deepEqual(stateFindings(good), [])
      assert.deepEqual(contextFindings(good), [])
    })
  })
})

/** Commands opening the state more than once: each opening starts (or connects to) the server again. */
function stateFindings(files: { path: string; text: string }[]): string[] {
  return files.flatMap(({ path, text }) => {
    const opens = code(text).match(/\b(?:withState|withDatabase|openDatabase)\s*\(/g) ?? []
    return opens.length > 1 ? [`${path}: ${opens.length} opens (${opens.join(', ')})`] : []
  })
}

/**
 * A command gets its pool, actor, clock, signal and progress from the base command in one call
 * (src/cli/operator-context.ts). The store's own administration (db status, stop and migrate,
 * restore --to) and validate's transition facts connect without a pool handed to any work, each
 * for a reason its command states; they are not found here, as they name no pool.
 */
const OWN_POOL: Record<string, string> = {
  // A server owns its pool for its whole life: its listeners and the sweeper share it until SIGTERM.
  'src/commands/gateway/serve.ts': 'the gateway opens and drains its own pool',
}

function contextFindings(files: { path: string; text: string }[]): string[] {
  return files.flatMap(({ path, text }) => {
    const body = code(text)
    // Without its strings too: a summary may say "pool" in prose, an import names its module in one.
    const bare = body.replace(/'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\.|[^`\\])*`/g, "''")
    const findings: string[] = []
    const openers = [
      ...(bare.match(/\b(?:openDatabase|withDatabase|withRestartableEmbedded)\b/g) ?? []),
      ...(body.match(/(?:store\/database|cli\/with-database)\.js/g) ?? []),
    ]
    if (openers.length > 0)
      findings.push(`${path}: opens the state itself (${[...new Set(openers)].join(', ')}); use this.withState`)
    if (/\bpool\b/.test(bare) && !/\bthis\.with(?:Deferred)?State\s*\(/.test(bare) && !(path in OWN_POOL))
      findings.push(`${path}: has a pool without this.withState`)
    const actor = bare.match(/\bactorOf\b|\bFLEETKIT_ACTOR\b|\benv\.(?:USER|LOGNAME)\b|\buserInfo\s*\(/g)
    if (actor) findings.push(`${path}: finds its actor itself (${actor.join(', ')}); take \`actor\` from the context`)
    return findings
  })
}
