// Rule: the steps only a person takes (docs/operations.md, between the
// manual-steps markers) and the check IDs whose owner is manual name the same checks.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

import type { CheckIdEntry } from '../../../src/checks/check-ids.js'
import type { RuleFinding } from './finding.js'

const BEGIN = '<!-- manual-steps:begin -->'
const END = '<!-- manual-steps:end -->'
const STEP_LINE = /^- `([a-z]+:[a-z0-9-]*\*?)`:\s*(.+)$/

export function parseManualSteps(markdown: string): Map<string, string> | undefined {
  const start = markdown.indexOf(BEGIN)
  const end = markdown.indexOf(END)
  if (start < 0 || end < start) return undefined
  const steps = new Map<string, string>()
  for (const line of markdown.slice(start + BEGIN.length, end).split('\n')) {
    const m = STEP_LINE.exec(line.trim())
    if (m) steps.set(m[1]!, m[2]!)
  }
  return steps
}

export async function checkManualSteps(root: string): Promise<RuleFinding[]> {
  const rule = 'manual-steps-match-checks'
  const registry = JSON.parse(await readFile(join(root, 'schema', 'check-ids.json'), 'utf8')) as {
    checks: CheckIdEntry[]
  }
  const manual = new Set(registry.checks.filter((c) => 'manual' in c.owner).map((c) => c.id))
  const steps = parseManualSteps(await readFile(join(root, 'docs', 'operations.md'), 'utf8'))
  if (!steps)
    return [{ rule, message: `docs/operations.md has no ${BEGIN} ... ${END} block`, file: 'docs/operations.md' }]
  const findings: RuleFinding[] = []
  for (const id of manual) {
    if (!steps.has(id))
      findings.push({
        rule,
        message: `check ${id} is owned by a person but docs/operations.md lists no step for it`,
        file: 'docs/operations.md',
      })
  }
  for (const id of steps.keys()) {
    if (!manual.has(id))
      findings.push({
        rule,
        message: `docs/operations.md lists a manual step for ${id}, which is not a manual check in schema/check-ids.json`,
        file: 'docs/operations.md',
      })
  }
  return findings
}
