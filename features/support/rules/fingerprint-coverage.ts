// Rule: the sync fast path sees what every role task can change. `fleetkit sync` skips a node when
// the resources its last converge managed are as recorded (src/sync/fingerprint.ts); it knows them from
// the fleetkit_events callback, which reads them from the modules it lists. A role task using another
// module that may report a change (a command that installs, a filesystem that formats) is invisible
// to it unless a `# fingerprint: kind:name (why)` comment above the task names the resource of
// ansible/playbooks/fingerprint.yml's `fleetkit_fingerprint_always` that shows its work, or
// `# fingerprint: via ...` says which resource the role's other tasks report does.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

import { isMap, isSeq, type Node, parse, parseDocument, type YAMLMap } from 'yaml'

import type { RuleFinding } from './finding.js'
import { readTree } from './source-files.js'

const RULE = 'role-changes-are-fingerprinted'
const CALLBACK = join('ansible', 'callback_plugins', 'fleetkit_events.py')
const PLAYBOOK = join('ansible', 'playbooks', 'fingerprint.yml')
/** Modules that change nothing on the host (or only include other tasks, which are checked themselves). */
const READ_ONLY = new Set([
  'fail',
  'assert',
  'debug',
  'set_fact',
  'meta',
  'import_role',
  'include_role',
  'import_tasks',
  'include_tasks',
  'wait_for',
  'wait_for_connection',
  'pause',
  'setup',
  'package_facts',
  'service_facts',
  'getent',
  'uri',
])
const TASK_KEYWORDS_WITH_TASKS = ['block', 'rescue', 'always']

/** The modules whose tasks the callback reads resources from: its module tables and the modules it names in `action in (...)`. */
export function callbackModules(source: string): Set<string> {
  const modules = new Set<string>()
  for (const m of source.matchAll(/^_(?:PATH_MODULES|UNIT_MODULES|NAMED)\s*=\s*\{([^}]*)\}/gm)) {
    // Set members and dict keys alike: a quoted word not after a colon.
    for (const word of m[1]!.matchAll(/(?<!:\s*)'([a-z_]+)'/g)) modules.add(word[1]!)
  }
  for (const m of source.matchAll(/\baction (?:in \(([^)]*)\)|== '([a-z_]+)')/g)) {
    for (const word of (m[1] ?? `'${m[2]}'`).matchAll(/'([a-z_]+)'/g)) modules.add(word[1]!)
  }
  return modules
}

/** `kind:name` of every resource fingerprint.yml always digests. */
export function alwaysFingerprinted(playbook: string): Set<string> {
  const plays = parse(playbook) as { vars?: { fleetkit_fingerprint_always?: { kind: string; name: string }[] } }[]
  return new Set((plays?.[0]?.vars?.fleetkit_fingerprint_always ?? []).map((r) => `${r.kind}:${r.name}`))
}

interface Task {
  name: string
  module: string
  changedWhenFalse: boolean
  comment: string
  line: number
}

/** Every task of a task file (inside blocks too), with its module, its changed_when and the comment above it. */
function tasksOf(text: string): Task[] {
  const document = parseDocument(text)
  const lineOf = (node: Node | null | undefined) => (node?.range ? text.slice(0, node.range[0]).split('\n').length : 0)
  const found: Task[] = []
  const walk = (list: unknown) => {
    if (!isSeq(list)) return
    for (const [index, item] of list.items.entries()) {
      if (!isMap(item)) continue
      // A comment above a block's first task belongs to the block's list in the parsed document.
      const comment = item.commentBefore ?? (index === 0 ? list.commentBefore : undefined) ?? ''
      const map = item as YAMLMap<unknown, unknown>
      const keys = map.items.map((pair) => String((pair.key as { value?: unknown })?.value ?? pair.key))
      for (const nested of TASK_KEYWORDS_WITH_TASKS) walk(map.get(nested, true))
      const moduleKey = keys.find((k) => /^[a-z0-9_]+\.[a-z0-9_]+\.[a-z0-9_]+$/.test(k))
      if (!moduleKey) continue
      const changedWhen = map.get('changed_when')
      found.push({
        name: String(map.get('name') ?? moduleKey),
        module: moduleKey.split('.').at(-1)!,
        changedWhenFalse: changedWhen === false,
        comment,
        line: lineOf(item),
      })
    }
  }
  walk(document.contents)
  return found
}

export async function checkFingerprintCoverage(root: string): Promise<RuleFinding[]> {
  const [callback, playbook] = await Promise.all([
    readFile(join(root, CALLBACK), 'utf8'),
    readFile(join(root, PLAYBOOK), 'utf8'),
  ])
  const reported = callbackModules(callback)
  const always = alwaysFingerprinted(playbook)
  const findings: RuleFinding[] = []
  for (const file of await readTree(root, [join('ansible', 'roles')], /\.ya?ml$/)) {
    if (file.path.split(/[\\/]/)[3] !== 'tasks') continue
    for (const task of tasksOf(file.text)) {
      if (reported.has(task.module) || READ_ONLY.has(task.module) || task.changedWhenFalse) continue
      const named = /^\s*fingerprint:\s*(.+?)\s*$/m.exec(task.comment)?.[1]
      if (named === undefined) {
        findings.push({
          rule: RULE,
          message: `task "${task.name}" can change the host through ${task.module}, which the sync fast path does not see: name what shows its work in a "# fingerprint: kind:name" comment (a resource of fleetkit_fingerprint_always in ${PLAYBOOK}) or "# fingerprint: via ..."`,
          file: file.path,
          line: task.line,
        })
      } else if (!named.startsWith('via ')) {
        // `kind:name`, optionally followed by a reason in parentheses.
        const resource = named.replace(/\s*\(.*\)$/, '')
        if (!always.has(resource))
          findings.push({
            rule: RULE,
            message: `task "${task.name}" names ${resource}, which fleetkit_fingerprint_always in ${PLAYBOOK} does not list`,
            file: file.path,
            line: task.line,
          })
      }
    }
  }
  return findings
}
