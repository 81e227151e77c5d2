// Rule: every repair owner in schema/check-ids.json names something that exists: a tag carried
// by a task in ansible/roles/*/tasks, a `fleetkit` command in the oclif manifest, or a
// `fleetkit-agent` command its entry dispatches (src/agent/main.ts).
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

import { parseAllDocuments } from 'yaml'

import type { CheckIdEntry } from '../../../src/checks/check-ids.js'
import { commandExists, loadManifestIds } from './doc-commands.js'
import type { RuleFinding } from './finding.js'
import { readTree } from './source-files.js'

/** Every value of a `tags:` key anywhere in a task file (tasks, blocks, includes). */
function collectTags(node: unknown, into: Set<string>): void {
  if (Array.isArray(node)) {
    for (const item of node) collectTags(item, into)
    return
  }
  if (node === null || typeof node !== 'object') return
  for (const [key, value] of Object.entries(node)) {
    if (key === 'tags') {
      for (const tag of Array.isArray(value) ? value : [value]) if (typeof tag === 'string') into.add(tag)
    } else {
      collectTags(value, into)
    }
  }
}

export async function roleTaskTags(root: string): Promise<Set<string>> {
  const tags = new Set<string>()
  const files = await readTree(root, [join('ansible', 'roles')], /\.ya?ml$/)
  for (const file of files) {
    const parts = file.path.split(/[\\/]/)
    // ansible/roles/<role>/tasks/<file>: tags on handlers or in defaults are not what --tags selects.
    if (parts[3] !== 'tasks') continue
    for (const document of parseAllDocuments(file.text)) collectTags(document.toJS(), tags)
  }
  return tags
}

/** The subcommands src/agent/main.ts dispatches (`case 'doctor':`). */
export async function agentCommands(root: string): Promise<Set<string>> {
  try {
    const text = await readFile(join(root, 'src', 'agent', 'main.ts'), 'utf8')
    return new Set([...text.matchAll(/\bcase '([a-z][a-z0-9-]*)':/g)].map((m) => m[1]!))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Set()
    throw error
  }
}

async function manifestIds(root: string): Promise<Set<string>> {
  try {
    return await loadManifestIds(root)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Set()
    throw error
  }
}

export async function checkRepairOwners(root: string): Promise<RuleFinding[]> {
  const rule = 'repair-owners-resolve'
  const file = join('schema', 'check-ids.json')
  const parsed = JSON.parse(await readFile(join(root, file), 'utf8')) as { checks: CheckIdEntry[] }
  const tags = await roleTaskTags(root)
  const [fleetkitIds, agentIds] = await Promise.all([manifestIds(root), agentCommands(root)])
  const findings: RuleFinding[] = []
  for (const entry of parsed.checks) {
    if (!entry.owner || !('repair' in entry.owner)) continue
    const repair = entry.owner.repair as { tag?: string; command?: string }
    if (typeof repair.tag === 'string' && !tags.has(repair.tag)) {
      findings.push({
        rule,
        message: `check ID ${entry.id} is repaired by tag ${repair.tag}, which no task in ansible/roles/*/tasks carries`,
        file,
      })
    }
    if (typeof repair.command === 'string') {
      const [program, ...words] = repair.command.trim().split(/\s+/)
      const known =
        program === 'fleetkit'
          ? words.length > 0 && commandExists(words, fleetkitIds)
          : program === 'fleetkit-agent' && words.length > 0 && agentIds.has(words[0]!)
      if (!known)
        findings.push({
          rule,
          message: `check ID ${entry.id} is repaired by command "${repair.command}", which is not a fleetkit or fleetkit-agent command`,
          file,
        })
    }
  }
  return findings
}
