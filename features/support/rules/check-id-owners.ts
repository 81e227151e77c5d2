// Rule: every check ID a code path reports has an owner in schema/check-ids.json,
// and every entry there names a repair or the reason only a person can fix it.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

import { type CheckIdEntry, findCheckEntry, hasOwner } from '../../../src/checks/check-ids.js'
import type { RuleFinding } from './finding.js'
import { lineOf, readTree } from './source-files.js'

/** Check IDs in code positions: `id: 'host:firewall'`, `checkId: '...'`, `check_id: host:firewall` (YAML/shell). */
const CHECK_ID_USE = /\b(?:id|checkId|check_id|check)\s*[:=]\s*['"]?([a-z]+:[a-z0-9-]+)\b/g

export async function checkCheckIdOwners(root: string): Promise<RuleFinding[]> {
  const rule = 'check-ids-have-owners'
  const parsed = JSON.parse(await readFile(join(root, 'schema', 'check-ids.json'), 'utf8')) as {
    checks: CheckIdEntry[]
  }
  const findings: RuleFinding[] = []
  for (const entry of parsed.checks) {
    if (!hasOwner(entry))
      findings.push({
        rule,
        message: `check ID ${entry.id} has no owner (repair tag/command or manual reason)`,
        file: 'schema/check-ids.json',
      })
  }
  const files = await readTree(root, ['src', 'ansible', 'cloud-init'], /\.(ts|js|mjs|sh|bash|ya?ml|j2)$/)
  const reported = new Set<string>()
  for (const file of files) {
    for (const match of file.text.matchAll(CHECK_ID_USE)) {
      const id = match[1]!
      if (/^(https?|file|node|data)$/.test(id.split(':')[0]!) || reported.has(id)) continue
      if (!hasOwner(findCheckEntry(parsed.checks, id))) {
        reported.add(id)
        findings.push({
          rule,
          message: `check ID ${id} is reported but has no owner in schema/check-ids.json`,
          file: file.path,
          line: lineOf(file.text, match.index ?? 0),
        })
      }
    }
  }
  return findings
}
