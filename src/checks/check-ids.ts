// The check ID registry (schema/check-ids.json): what each check means and who
// owns its fix. The most specific entry owns an ID: exact beats prefix, longer prefix beats shorter.
import { readFileSync } from 'node:fs'

import { packagePath } from '../package-root.js'

export type CheckOwner =
  | {
      repair:
        | {
            /** @minLength 1 */
            tag: string
          }
        | {
            /** @minLength 1 */
            command: string
          }
    }
  | {
      /** @minLength 1 */
      manual: string
    }

export interface CheckIdEntry {
  id: string
  meaning: string
  owner: CheckOwner
}

export function loadCheckIds(path = packagePath('schema', 'check-ids.json')): CheckIdEntry[] {
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as { checks: CheckIdEntry[] }
  return parsed.checks
}

export function findCheckEntry(entries: readonly CheckIdEntry[], id: string): CheckIdEntry | undefined {
  let best: CheckIdEntry | undefined
  let bestScore = -1
  for (const entry of entries) {
    let score = -1
    if (entry.id === id) score = Number.MAX_SAFE_INTEGER
    else if (entry.id.endsWith('*') && id.startsWith(entry.id.slice(0, -1))) score = entry.id.length
    if (score > bestScore) {
      best = entry
      bestScore = score
    }
  }
  return best
}

export function hasOwner(entry: CheckIdEntry | undefined): boolean {
  if (!entry?.owner) return false
  if ('manual' in entry.owner) return typeof entry.owner.manual === 'string' && entry.owner.manual.trim() !== ''
  const repair = entry.owner.repair as { tag?: string; command?: string }
  return Boolean(repair?.tag?.trim() || repair?.command?.trim())
}

export function describeOwner(owner: CheckOwner): string {
  if ('manual' in owner) return `manual: ${owner.manual}`
  return 'tag' in owner.repair ? `repair: ansible tag ${owner.repair.tag}` : `repair: ${owner.repair.command}`
}
