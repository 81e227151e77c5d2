// Rule: every failure code used in src/, ansible/ or cloud-init/ has a runbook
// line; every runbook code is registered and used; the stated count is right.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

import { parseRunbooks, runbookCodes } from '../../../src/checks/runbooks.js'
import type { RuleFinding } from './finding.js'
import { lineOf, readTree, type SourceFile } from './source-files.js'

const CODE = '([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)'

/** Code positions, by convention (docs/runbooks.md says so for contributors). */
const USAGE_PATTERNS: RegExp[] = [
  new RegExp(`FleetkitError\\(\\s*'${CODE}'`, 'g'), // TypeScript: new FleetkitError('CODE', ...)
  new RegExp(`\\bcode:\\s*'${CODE}'`, 'g'), // TypeScript: { code: 'CODE' }
  new RegExp(`\\bfail\\s+${CODE}\\b`, 'g'), // shell: fail CODE "message"
  new RegExp(`\\bmsg:\\s*(?:[>|][-+]?\\s*)?["']?${CODE}:`, 'g'), // Ansible: msg: "CODE: ..." or msg: >- CODE: ...
]

/** A family file entry: `  SOME_CODE: { summary: '...', person: true, ... },` (may span lines). */
const REGISTRY_ENTRY = new RegExp(`^\\s*${CODE}:\\s*\\{([^}]*)\\}`, 'gm')

export interface CodeUse {
  code: string
  file: string
  line: number
}

export function findCodeUses(files: SourceFile[]): CodeUse[] {
  const uses: CodeUse[] = []
  for (const file of files) {
    if (file.path.startsWith(join('src', 'checks', 'codes'))) continue
    for (const pattern of USAGE_PATTERNS) {
      for (const match of file.text.matchAll(pattern)) {
        uses.push({ code: match[1]!, file: file.path, line: lineOf(file.text, match.index ?? 0) })
      }
    }
  }
  return uses
}

export interface RegisteredCode {
  code: string
  person: boolean
  file: string
}

/** Reads the registry from the family files' text, so the rule runs on any tree (including broken fixtures). */
export function parseRegistry(files: SourceFile[]): RegisteredCode[] {
  const codes: RegisteredCode[] = []
  for (const file of files) {
    if (!file.path.startsWith(join('src', 'checks', 'codes'))) continue
    for (const match of file.text.matchAll(REGISTRY_ENTRY)) {
      codes.push({ code: match[1]!, person: /person:\s*true/.test(match[2]!), file: file.path })
    }
  }
  return codes
}

export async function checkCodeRunbooks(root: string): Promise<RuleFinding[]> {
  const rule = 'codes-have-runbooks'
  const files = await readTree(root, ['src', 'ansible', 'cloud-init'], /\.(ts|js|mjs|sh|bash|ya?ml|j2|tmpl|service)$/)
  const runbooks = parseRunbooks(await readFile(join(root, 'docs', 'runbooks.md'), 'utf8'))
  const inRunbook = new Set(runbookCodes(runbooks))
  const registry = parseRegistry(files)
  const registered = new Set(registry.map((c) => c.code))
  const uses = findCodeUses(files)
  const used = new Set(uses.map((u) => u.code))
  const findings: RuleFinding[] = []

  const reported = new Set<string>()
  for (const use of uses) {
    if (inRunbook.has(use.code) || reported.has(use.code)) continue
    reported.add(use.code)
    findings.push({
      rule,
      message: `code ${use.code} is used but has no line in docs/runbooks.md`,
      file: use.file,
      line: use.line,
    })
  }
  for (const code of registry) {
    if (!inRunbook.has(code.code) && !reported.has(code.code)) {
      findings.push({
        rule,
        message: `code ${code.code} is registered but has no line in docs/runbooks.md`,
        file: code.file,
      })
    }
    if (!used.has(code.code))
      findings.push({ rule, message: `code ${code.code} is registered but nothing uses it`, file: code.file })
  }
  for (const code of inRunbook) {
    if (!registered.has(code))
      findings.push({
        rule,
        message: `docs/runbooks.md names ${code}, which is not registered in src/checks/codes/`,
        file: 'docs/runbooks.md',
      })
    else if (!used.has(code))
      findings.push({ rule, message: `docs/runbooks.md names ${code}, which nothing uses`, file: 'docs/runbooks.md' })
  }
  const seen = new Set<string>()
  for (const code of runbookCodes(runbooks)) {
    if (seen.has(code))
      findings.push({ rule, message: `docs/runbooks.md has more than one line for ${code}`, file: 'docs/runbooks.md' })
    seen.add(code)
  }
  const person = registry.filter((c) => c.person).length
  const stated = runbooks.statedCount
  if (!stated) {
    findings.push({
      rule,
      message: 'docs/runbooks.md does not state "fleetkit has N failure codes; M need a person."',
      file: 'docs/runbooks.md',
    })
  } else if (stated.codes !== registry.length || stated.person !== person) {
    findings.push({
      rule,
      message: `docs/runbooks.md states ${stated.codes} codes (${stated.person} need a person), the registry has ${registry.length} (${person} need a person)`,
      file: 'docs/runbooks.md',
    })
  }
  return findings
}
