// Rule: every repository path quoted in README.md or docs/ (`src/...`, `schema/...`, a top-level file such
// as `package.json`) exists, a glob matching at least one file, and every `FLEETKIT_...` variable quoted
// there is read by the code: a doc that names a moved file or a removed variable sends a reader nowhere.
import { readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'

import type { RuleFinding } from './finding.js'
import { lineOf, readTree, type SourceFile } from './source-files.js'

const RULE = 'docs-name-real-paths'

/** The folders of this repository a quoted path can start with. */
const OUR_DIRS = [
  'ansible',
  'bench',
  'bin',
  'cloud-init',
  'docs',
  'examples',
  'features',
  'monitoring',
  'policy',
  'schema',
  'scripts',
  'src',
  'systemd',
  'test',
  'web',
]
const OUR_PATH = new RegExp(`^(?:${OUR_DIRS.join('|')})/`)

/** Top-level files a doc names without a folder. */
const TOP_LEVEL_FILE =
  /^(?:package(?:-lock)?\.json|tsconfig(?:\.[a-z]+)?\.json|knip\.json|mise\.toml|ansible\.cfg|cucumber\.js|eslint\.config\.js|oclif\.manifest\.json|LICENSE|README\.md|\.mocharc\.cjs|\.prettierrc\.json|\.prettierignore|\.ansible-lint|\.gitignore)$/

/**
 * Paths that are placeholders, not files: the doc shows the shape of a name. Each is allowed only with a
 * reason, and the folder it names must still exist.
 */
const PATH_PLACEHOLDERS: ReadonlyMap<string, { folder: string; reason: string }> = new Map([
  ['src/commands/<topic>/<verb>.ts', { folder: 'src/commands', reason: 'the layout of the oclif commands' }],
  ['schema/output/NAME.schema.json', { folder: 'schema/output', reason: "one command's generated output schema" }],
  ['src/store/migrations/NNNN-name.sql', { folder: 'src/store/migrations', reason: 'how a migration is named' }],
  ['features/x.feature', { folder: 'features', reason: 'how to run one feature file' }],
  ['test/bats/x.bats', { folder: 'test/bats', reason: 'how to run one bats file' }],
  ['test/unit/x.test.ts', { folder: 'test/unit', reason: 'how to run one mocha file' }],
  ['test/unit/x/y.test.ts', { folder: 'test/unit', reason: 'how to run one mocha file' }],
])

/** Where the code that reads a `FLEETKIT_` variable lives. */
const CODE_DIRS = ['src/', 'ansible/', 'cloud-init/', 'systemd/']

/**
 * Variables the test harness reads, not the product: each must be read where its entry says (a folder
 * ending in `/`, or a file), for its reason.
 */
const HARNESS_VARIABLES: ReadonlyMap<string, { readIn: string[]; reason: string }> = new Map([
  ['FLEETKIT_AGENT_TEST_NODE', { readIn: ['test/'], reason: 'the Node binary the agent suites run the bundle on' }],
  ['FLEETKIT_HOST_JOBS', { readIn: ['test/'], reason: 'the workers of the container host suites' }],
  ['FLEETKIT_PROPERTY_FULL', { readIn: ['test/'], reason: "the grammar property test's whole cross product" }],
  ['FLEETKIT_SKIP_INSTALL', { readIn: ['scripts/'], reason: 'scripts/test skips npm ci' }],
  ['FLEETKIT_TEST_JOBS', { readIn: ['.mocharc.cjs'], reason: 'the workers of the main mocha suite' }],
  ['FLEETKIT_WRITE_SCREENSHOT', { readIn: ['test/'], reason: "the status page test writes the docs' screenshot" }],
])

interface Quoted {
  word: string
  line: number
}

/** Every word of an inline code span or of a fenced block line, with the line it is on. */
function quotedWords(markdown: string): Quoted[] {
  const words: Quoted[] = []
  const fencedRanges: Array<[number, number]> = []
  const addWords = (text: string, index: number) => {
    const line = lineOf(markdown, index)
    for (const word of text.split(/\s+/)) if (word) words.push({ word, line })
  }
  for (const block of markdown.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)) {
    const start = block.index ?? 0
    fencedRanges.push([start, start + block[0].length])
    let offset = start + block[0].indexOf('\n') + 1
    for (const line of block[1]!.split('\n')) {
      addWords(line, offset)
      offset += line.length + 1
    }
  }
  for (const span of markdown.matchAll(/`([^`\n]+)`/g)) {
    const at = span.index ?? 0
    if (!fencedRanges.some(([s, e]) => at >= s && at < e)) addWords(span[1]!, at)
  }
  return words
}

/** The repository path a quoted word names, without quotes, brackets, `./`, a `:LINE` or a `#anchor`; else undefined. */
function repositoryPath(word: string): string | undefined {
  const path = word
    .replace(/^[[("'=]+/, '')
    .replace(/^\.\//, '')
    .replace(/#.*$/, '')
    .replace(/[\])"',.;]+$/, '')
    .replace(/:\d+(?:-\d+)?$/, '')
    .replace(/:$/, '')
  if (OUR_PATH.test(path) || TOP_LEVEL_FILE.test(path)) return path
  return undefined
}

function globPattern(glob: string): RegExp {
  let source = ''
  let braces = 0
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!
    if (c === '*' && glob[i + 1] === '*') {
      // `**/` is any number of folders, none included; `**` at the end is anything below.
      source += glob[i + 2] === '/' ? '(?:.*/)?' : '.*'
      i += glob[i + 2] === '/' ? 2 : 1
    } else if (c === '*') source += '[^/]*'
    else if (c === '?') source += '[^/]'
    else if (c === '{') {
      source += '(?:'
      braces++
    } else if (c === '}' && braces > 0) {
      source += ')'
      braces--
    } else if (c === ',' && braces > 0) source += '|'
    else source += c.replace(/[.+^$()|[\]\\]/g, '\\$&')
  }
  return new RegExp(`^${source}/?$`)
}

/** Every file and folder of the tree, relative to it, skipping what is generated or vendored. */
async function listTree(root: string): Promise<string[]> {
  const paths: string[] = []
  async function walk(dir: string, prefix: string): Promise<void> {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (['node_modules', 'dist', '.git', '.cache', 'coverage', '.state'].includes(entry.name)) continue
      const path = `${prefix}${entry.name}`
      paths.push(path)
      if (entry.isDirectory()) await walk(join(dir, entry.name), `${path}/`)
    }
  }
  await walk(root, '')
  return paths
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR')
      return false
    throw error
  }
}

async function readDocs(root: string): Promise<SourceFile[]> {
  const docs = [...(await readTree(root, ['docs'], /\.md$/))]
  try {
    docs.push({ path: 'README.md', text: await readFile(join(root, 'README.md'), 'utf8') })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  return docs
}

function spelled(places: string[]): string {
  return places.length === 1 ? places[0]! : `${places.slice(0, -1).join(', ')} or ${places.at(-1)!}`
}

/** The files of folders (`src/`) and single files (`.mocharc.cjs`) of the tree. */
async function readPlaces(root: string, places: string[]): Promise<SourceFile[]> {
  const files: SourceFile[] = []
  for (const place of places) {
    if (place.endsWith('/')) files.push(...(await readTree(root, [place], /./)))
    else if (await exists(join(root, place)))
      files.push({ path: place, text: await readFile(join(root, place), 'utf8') })
  }
  return files
}

/** A line that is only a comment (`//`, `/*`, ` *`, `#`) mentions a variable; it does not read it. */
function mentionedInCode(text: string, name: RegExp): boolean {
  return text.split('\n').some((line) => name.test(line) && !/^\s*(?:\/\/|\/\*|\*|#)/.test(line))
}

export async function checkDocPaths(root: string): Promise<RuleFinding[]> {
  const findings: RuleFinding[] = []
  const report = (file: string, line: number, message: string) =>
    findings.push({ rule: RULE, message: `${file}:${line} ${message}`, file, line })
  let tree: string[] | undefined
  const sources = new Map<string, SourceFile[]>()
  /** Whether a line of code (not a comment) in the places has the variable's name as a whole word. */
  const readSomewhere = async (places: string[], name: string): Promise<boolean> => {
    const key = places.join(',')
    if (!sources.has(key)) sources.set(key, await readPlaces(root, places))
    const word = new RegExp(`\\b${name}\\b`)
    return sources.get(key)!.some((file) => mentionedInCode(file.text, word))
  }
  for (const doc of await readDocs(root)) {
    for (const { word, line } of quotedWords(doc.text)) {
      for (const name of word.match(/\bFLEETKIT_[A-Z0-9_]*[A-Z0-9]\b/g) ?? []) {
        const dirs = HARNESS_VARIABLES.get(name)?.readIn ?? CODE_DIRS
        if (!(await readSomewhere(dirs, name)))
          report(doc.path, line, `names ${name}, which nothing in ${spelled(dirs)} reads`)
      }
      const path = repositoryPath(word)
      if (!path) continue
      const placeholder = PATH_PLACEHOLDERS.get(path)
      if (placeholder) {
        if (!(await exists(join(root, placeholder.folder))))
          report(doc.path, line, `names ${path}, a placeholder in ${placeholder.folder}/, which does not exist`)
      } else if (/[*?{]/.test(path)) {
        tree ??= await listTree(root)
        const pattern = globPattern(path)
        if (!tree.some((p) => pattern.test(p))) report(doc.path, line, `names ${path}, which matches nothing`)
      } else if (!(await exists(join(root, path)))) {
        report(doc.path, line, `names ${path}, which does not exist`)
      }
    }
  }
  return findings
}
