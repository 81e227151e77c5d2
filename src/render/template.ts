// Fills @@NAME@@ placeholders of a cloud-init/ template. Values land only inside quoted
// heredocs, so a value may never hold the heredoc's terminator line or another placeholder.
import { readFileSync } from 'node:fs'

import { packagePath } from '../package-root.js'

const cache = new Map<string, string>()

export function readTemplate(name: string): string {
  let text = cache.get(name)
  if (text === undefined) {
    text = readFileSync(packagePath('cloud-init', name), 'utf8')
    cache.set(name, text)
  }
  return text
}

const PLACEHOLDER = /@@([A-Z0-9_]+)@@/g

export function fillTemplate(template: string, values: Readonly<Record<string, string>>): string {
  const terminators = new Set([...template.matchAll(/<<'([A-Z0-9_]+)'/g)].map((m) => m[1]!))
  for (const [name, value] of Object.entries(values)) {
    if (/@@[A-Z0-9_]+@@/.test(value)) throw new Error(`template value ${name} holds a placeholder`)
    for (const line of value.split('\n')) {
      if (terminators.has(line.trim())) throw new Error(`template value ${name} holds a heredoc terminator`)
    }
  }
  const out = template.replace(PLACEHOLDER, (_, name: string) => {
    const value = values[name]
    if (value === undefined) throw new Error(`template placeholder ${name} has no value`)
    return value
  })
  return out
}
