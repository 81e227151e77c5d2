// Rule: every `fleetkit ...` command quoted in README.md or docs/ exists in the
// oclif manifest (topics separated by spaces; a topic alone counts when it has commands).
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

import type { RuleFinding } from './finding.js'
import { lineOf, readTree } from './source-files.js'

export interface QuotedCommand {
  text: string
  words: string[]
  file: string
  line: number
}

/** Inline code spans and lines of fenced blocks that start with `fleetkit ` (or `$ fleetkit `). */
export function findQuotedCommands(file: string, markdown: string): QuotedCommand[] {
  const found: QuotedCommand[] = []
  const add = (text: string, index: number) => {
    const m = /^(?:\$\s+)?fleetkit((?:\s+\S+)*)\s*$/.exec(text.trim())
    if (!m) return
    found.push({
      text: text.trim(),
      words: m[1]!.trim().split(/\s+/).filter(Boolean),
      file,
      line: lineOf(markdown, index),
    })
  }
  const fence = /^```[^\n]*\n([\s\S]*?)^```/gm
  const fencedRanges: Array<[number, number]> = []
  for (const block of markdown.matchAll(fence)) {
    const start = block.index ?? 0
    fencedRanges.push([start, start + block[0].length])
    let offset = start + block[0].indexOf('\n') + 1
    for (const line of block[1]!.split('\n')) {
      for (const part of line.split(/\s*(?:&&|\|\||;)\s*/)) add(part, offset)
      offset += line.length + 1
    }
  }
  for (const span of markdown.matchAll(/`([^`\n]+)`/g)) {
    const at = span.index ?? 0
    if (fencedRanges.some(([s, e]) => at >= s && at < e)) continue
    for (const part of span[1]!.split(/\s*(?:&&|\|\||;)\s*/)) add(part, at)
  }
  return found
}

export function commandExists(words: string[], ids: ReadonlySet<string>): boolean {
  if (words.length === 0 || words[0]!.startsWith('-')) return true
  const names: string[] = []
  for (const word of words) {
    if (!/^[a-z][a-z0-9-]*$/.test(word)) break
    names.push(word)
  }
  if (names[0] === 'help') return true
  // The longest run of words that is a command id wins; the rest are arguments.
  for (let k = names.length; k >= 1; k--) {
    if (ids.has(names.slice(0, k).join(':'))) return true
  }
  // A topic alone (`fleetkit release`) is fine when it has commands.
  const topic = `${names.join(':')}:`
  return names.length > 0 && [...ids].some((known) => known.startsWith(topic))
}

export async function loadManifestIds(root: string): Promise<Set<string>> {
  const manifest = JSON.parse(await readFile(join(root, 'oclif.manifest.json'), 'utf8')) as {
    commands: Record<string, unknown>
  }
  const ids = new Set(Object.keys(manifest.commands))
  // Commands of the plugins fleetkit ships (`fleetkit autocomplete`) are in each plugin's own manifest.
  for (const plugin of await corePlugins(root)) {
    try {
      const own = JSON.parse(await readFile(join(root, 'node_modules', plugin, 'oclif.manifest.json'), 'utf8')) as {
        commands?: Record<string, unknown>
      }
      for (const id of Object.keys(own.commands ?? {})) ids.add(id)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
  }
  return ids
}

async function corePlugins(root: string): Promise<string[]> {
  try {
    const pjson = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { oclif?: { plugins?: string[] } }
    return pjson.oclif?.plugins ?? []
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

export async function checkDocCommands(root: string, ids?: ReadonlySet<string>): Promise<RuleFinding[]> {
  const rule = 'docs-name-real-commands'
  const known = ids ?? (await loadManifestIds(root))
  const docs = [...(await readTree(root, ['docs'], /\.md$/))]
  try {
    docs.push({ path: 'README.md', text: await readFile(join(root, 'README.md'), 'utf8') })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const findings: RuleFinding[] = []
  for (const doc of docs) {
    for (const quoted of findQuotedCommands(doc.path, doc.text)) {
      if (!commandExists(quoted.words, known)) {
        findings.push({
          rule,
          message: `\`${quoted.text}\` names no fleetkit command`,
          file: quoted.file,
          line: quoted.line,
        })
      }
    }
  }
  return findings
}
