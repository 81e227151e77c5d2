// Reads docs/runbooks.md: sections (Meaning, Confirm, Fix, Escalate) with one line
// per code, and the stated count of codes. Used by `fleetkit runbook` and the rules.
import { readFile } from 'node:fs/promises'

import { packagePath } from '../package-root.js'

interface RunbookSection {
  title: string
  meaning: string
  confirm: string
  fix: string
  escalate: string
  codes: Map<string, string>
}

export interface Runbooks {
  sections: RunbookSection[]
  /** The numbers the document states in its "N failure codes, M need a person" line. */
  statedCount: { codes: number; person: number } | undefined
}

export interface RunbookEntry {
  code: string
  line: string
  section: RunbookSection
}

const RUNBOOKS_PATH = packagePath('docs', 'runbooks.md')

const CODE_LINE = /^- `([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`: (.+)$/
const FIELD_LINE = /^\*\*(Meaning|Confirm|Fix|Escalate)\*\*:?\s*(.*)$/
const COUNT_LINE = /fleetkit has (\d+) failure codes?; (\d+) needs? a person/

export function parseRunbooks(markdown: string): Runbooks {
  const sections: RunbookSection[] = []
  let current: RunbookSection | undefined
  let statedCount: Runbooks['statedCount']
  for (const line of markdown.split('\n')) {
    const count = COUNT_LINE.exec(line)
    if (count) statedCount = { codes: Number(count[1]), person: Number(count[2]) }
    if (line.startsWith('## ')) {
      current = { title: line.slice(3).trim(), meaning: '', confirm: '', fix: '', escalate: '', codes: new Map() }
      sections.push(current)
      continue
    }
    if (!current) continue
    const field = FIELD_LINE.exec(line)
    if (field) {
      const key = field[1]!.toLowerCase() as 'meaning' | 'confirm' | 'fix' | 'escalate'
      current[key] = field[2]!.trim()
      continue
    }
    const code = CODE_LINE.exec(line)
    if (code) current.codes.set(code[1]!, code[2]!.trim())
  }
  return { sections, statedCount }
}

export async function loadRunbooks(path = RUNBOOKS_PATH): Promise<Runbooks> {
  return parseRunbooks(await readFile(path, 'utf8'))
}

export function findRunbookEntry(runbooks: Runbooks, code: string): RunbookEntry | undefined {
  for (const section of runbooks.sections) {
    const line = section.codes.get(code)
    if (line !== undefined) return { code, line, section }
  }
  return undefined
}

export function runbookCodes(runbooks: Runbooks): string[] {
  return runbooks.sections.flatMap((section) => [...section.codes.keys()])
}
