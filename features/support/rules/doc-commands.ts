// Rule: every `fleetkit ...` command quoted in README.md or docs/ exists in the
// oclif manifest (topics separated by spaces; a topic alone counts when it has commands),
// and every `--flag` (or `-c`) quoted after it is a flag of that command.
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

/** The command id the quoted words name: the longest run of leading words that is one; else undefined. */
export function commandOf(words: string[], ids: ReadonlySet<string>): { id: string; rest: string[] } | undefined {
  const names: string[] = []
  for (const word of words) {
    if (!/^[a-z][a-z0-9-]*$/.test(word)) break
    names.push(word)
  }
  for (let k = names.length; k >= 1; k--) {
    const id = names.slice(0, k).join(':')
    if (ids.has(id)) return { id, rest: words.slice(k) }
  }
  return undefined
}

export function commandExists(words: string[], ids: ReadonlySet<string>): boolean {
  if (words.length === 0 || words[0]!.startsWith('-')) return true
  if (words[0] === 'help') return true
  // The longest run of words that is a command id wins; the rest are arguments.
  if (commandOf(words, ids)) return true
  const names: string[] = []
  for (const word of words) {
    if (!/^[a-z][a-z0-9-]*$/.test(word)) break
    names.push(word)
  }
  // A topic alone (`fleetkit release`) is fine when it has commands.
  const topic = `${names.join(':')}:`
  return names.length > 0 && [...ids].some((known) => known.startsWith(topic))
}

interface ManifestFlag {
  name?: string
  char?: string
  allowNo?: boolean
  aliases?: string[]
}

type ManifestCommands = Record<string, { flags?: Record<string, ManifestFlag> }>

/** Every command of fleetkit's manifest and of the oclif plugins it ships, with its flags as declared. */
async function loadManifestCommands(root: string): Promise<ManifestCommands> {
  const manifest = JSON.parse(await readFile(join(root, 'oclif.manifest.json'), 'utf8')) as {
    commands: ManifestCommands
  }
  const commands: ManifestCommands = { ...manifest.commands }
  // Commands of the plugins fleetkit ships (`fleetkit autocomplete`) are in each plugin's own manifest.
  for (const plugin of await corePlugins(root)) {
    try {
      const own = JSON.parse(await readFile(join(root, 'node_modules', plugin, 'oclif.manifest.json'), 'utf8')) as {
        commands?: ManifestCommands
      }
      for (const [id, command] of Object.entries(own.commands ?? {})) commands[id] ??= command
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
  }
  return commands
}

export async function loadManifestIds(root: string): Promise<Set<string>> {
  return new Set(Object.keys(await loadManifestCommands(root)))
}

/** Per command id, every way its flags can be typed: `--name`, `-c`, `--no-name` (allowNo), aliases, `--help`. */
export async function loadManifestFlags(root: string): Promise<Map<string, Set<string>>> {
  const flags = new Map<string, Set<string>>()
  for (const [id, command] of Object.entries(await loadManifestCommands(root))) {
    const spellings = new Set(['--help', '-h'])
    for (const [key, flag] of Object.entries(command.flags ?? {})) {
      const name = flag.name ?? key
      spellings.add(`--${name}`)
      if (flag.char) spellings.add(`-${flag.char}`)
      if (flag.allowNo) spellings.add(`--no-${name}`)
      for (const alias of flag.aliases ?? []) spellings.add(`--${alias}`)
    }
    flags.set(id, spellings)
  }
  return flags
}

/**
 * The flags quoted after a command: `--name`, `--name=value` and `-c`, also inside usage brackets
 * (`[--follow]`, `[--a | --b]`). A shell comment, a pipe into another program or a `$(...)` ends them.
 */
export function quotedFlags(rest: readonly string[]): string[] {
  const flags: string[] = []
  const words = rest
    .join(' ')
    .replace(/\$\([^)]*\)/g, ' ')
    .split(/\s+/)
    .filter(Boolean)
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    if (word.startsWith('#')) break
    if (word === '|' && !/^[[(]?-/.test(words[i + 1] ?? '')) break
    const m = /^[[(]*(--?[A-Za-z][A-Za-z0-9-]*)(?:=\S*)?[\])]*[,.;:]?$/.exec(word)
    if (m) flags.push(m[1]!)
  }
  return flags
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

export async function checkDocCommands(
  root: string,
  ids?: ReadonlySet<string>,
  flagsById?: ReadonlyMap<string, ReadonlySet<string>>,
): Promise<RuleFinding[]> {
  const rule = 'docs-name-real-commands'
  const known = ids ?? (await loadManifestIds(root))
  const flags = flagsById ?? (ids ? undefined : await loadManifestFlags(root))
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
        continue
      }
      const command = commandOf(quoted.words, known)
      const own = command && flags?.get(command.id)
      if (!command || !own) continue
      for (const flag of quotedFlags(command.rest).filter((f) => !own.has(f))) {
        findings.push({
          rule,
          message: `\`${quoted.text}\` names ${flag}, which \`fleetkit ${command.id.replaceAll(':', ' ')}\` does not take`,
          file: quoted.file,
          line: quoted.line,
        })
      }
    }
  }
  return findings
}
