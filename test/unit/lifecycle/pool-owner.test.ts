// One owner of the pool (issue 20, item 6): a command opens the state database once and hands
// the pool down; the lifecycle functions take it and never open one themselves, and import
// statically (a lazy import() would hide what a module depends on from the layer check).
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

  it('a command opens the database at most once (withDatabase or openDatabase, one call)', () => {
    const findings = sources('commands').flatMap(({ path, text }) => {
      const opens = code(text).match(/\b(?:withDatabase|openDatabase|prepareState)\s*\(/g) ?? []
      return opens.length > 1 ? [`${path}: ${opens.length} opens (${opens.join(', ')})`] : []
    })
    assert.deepEqual(findings, [])
  })
})
