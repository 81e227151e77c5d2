// The module graph of src/ and the checks the layer test makes on it: which folder may import
// which (the layer order), and no import cycles. Parsed with TypeScript's own parser, so static
// imports, re-exports, `import type`, `import('x')` expressions and `import('x').T` types all count,
// and an import inside a string or a comment does not.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

import ts from 'typescript'

/**
 * The layers of src/, top down: a module may import its own folder and any folder of a LOWER layer,
 * never a peer of its own layer nor anything above. A folder is the first path segment under src/
 * (src/store/embedded is store; a top-level file such as package-root.ts is its own folder).
 * docs/architecture.md states this order (a test compares the two).
 */
export const SRC_LAYERS: readonly (readonly string[])[] = [
  ['commands', 'agent'],
  ['demo'],
  ['cli', 'lifecycle', 'sync', 'gateway'],
  ['render'],
  ['pki', 'release', 'provider'],
  ['store'],
  ['definition', 'protocol', 'fs'],
  ['checks'],
  ['config', 'log', 'package-root.ts'],
]

/** The order as one line, as docs/architecture.md writes it. */
export function formatLayers(layers: readonly (readonly string[])[]): string {
  return layers.map((layer) => layer.join(', ')).join(' → ')
}

export interface ImportSite {
  /** As written in the source. */
  specifier: string
  /** 1-based line of the import. */
  line: number
  /** An `import()` expression (or type), not a declaration. */
  dynamic: boolean
}

export interface ParsedImports {
  imports: ImportSite[]
  /** Lines of `import(expr)` whose module is not a string literal: no test could see what they load. */
  computed: number[]
}

/** Every import of one source text. */
export function parseImports(text: string, fileName = 'module.ts'): ParsedImports {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS)
  const imports: ImportSite[] = []
  const computed: number[] = []
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1
  const add = (spec: ts.Node | undefined, at: ts.Node, dynamic: boolean) => {
    if (spec && (ts.isStringLiteral(spec) || ts.isNoSubstitutionTemplateLiteral(spec)))
      imports.push({ specifier: spec.text, line: lineOf(at), dynamic })
    else if (dynamic) computed.push(lineOf(at))
  }
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier, node, false)
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      add(node.moduleReference.expression, node, false)
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      add(node.arguments[0], node, true)
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal, node, true)
    ts.forEachChild(node, visit)
  }
  visit(source)
  return { imports, computed }
}

export interface ModuleImport extends ImportSite {
  /** A module of src/ (relative to src/, `.ts`), or a bare/`node:` specifier as written. */
  target: string
}

export interface ModuleGraph {
  /** Every module of src/ (relative to src/) and what it imports. */
  modules: Map<string, ModuleImport[]>
  /** `module:line` of every computed `import()`. */
  computed: string[]
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return /\.(ts|mts|mjs)$/.test(name) && !name.endsWith('.d.ts') ? [path] : []
  })
}

/** The import graph of every .ts/.mjs module under `srcDir`. */
export function moduleGraph(srcDir: string): ModuleGraph {
  const modules = new Map<string, ModuleImport[]>()
  const computed: string[] = []
  for (const file of sourceFiles(srcDir)) {
    const module = relative(srcDir, file)
    const parsed = parseImports(readFileSync(file, 'utf8'), file)
    modules.set(
      module,
      parsed.imports.map((site) => ({
        ...site,
        target: site.specifier.startsWith('.')
          ? relative(srcDir, resolve(dirname(file), site.specifier)).replace(/\.js$/, '.ts')
          : site.specifier,
      })),
    )
    computed.push(...parsed.computed.map((line) => `${module}:${line}`))
  }
  return { modules, computed }
}

/** The folder a module of src/ belongs to: its first path segment. */
export function folderOf(module: string): string {
  return module.split('/')[0]!
}

/** Every import that breaks `layers`, one line each; also modules in no layer and imports leaving src/. */
export function layerViolations(graph: ModuleGraph, layers: readonly (readonly string[])[]): string[] {
  const layerOf = new Map<string, number>()
  layers.forEach((layer, i) => layer.forEach((folder) => layerOf.set(folder, i)))
  const violations: string[] = []
  for (const [module, imports] of graph.modules) {
    const from = folderOf(module)
    const own = layerOf.get(from)
    if (own === undefined) {
      violations.push(`${module}: folder ${from} is in no layer (add it to SRC_LAYERS and docs/architecture.md)`)
      continue
    }
    for (const { specifier, target, line } of imports) {
      // Packages and node: built-ins are not layered here (the agent-bundle test narrows those).
      if (!specifier.startsWith('.')) continue
      if (target.startsWith('..')) {
        violations.push(`${module}:${line} imports ${target}, outside src/: the product must not carry it`)
        continue
      }
      const to = folderOf(target)
      if (to === from) continue
      const theirs = layerOf.get(to)
      if (theirs === undefined) violations.push(`${module}:${line} imports ${target}: folder ${to} is in no layer`)
      else if (theirs === own) violations.push(`${module}:${line} imports ${target}: ${from} and ${to} are peers`)
      else if (theirs < own) violations.push(`${module}:${line} imports ${target}: ${to} is above ${from}`)
    }
  }
  return violations.sort()
}

/** The folder that alone may hold the database driver and run statements: every SQL statement of src/ is there. */
export const DATABASE_OWNER = 'store'

/** The driver packages only DATABASE_OWNER may import (the driver itself and its pg-* parts). */
function isDriver(specifier: string): boolean {
  return specifier === 'pg' || specifier.startsWith('pg/') || /^pg-[a-z-]+$/.test(specifier)
}

/** Every import of the database driver from a module outside the owner folder, one line each. */
export function driverImports(graph: ModuleGraph, owner = DATABASE_OWNER): string[] {
  const found: string[] = []
  for (const [module, imports] of graph.modules) {
    if (folderOf(module) === owner) continue
    for (const { specifier, line } of imports)
      if (isDriver(specifier)) found.push(`${module}:${line} imports ${specifier}: only src/${owner} holds the driver`)
  }
  return found.sort()
}

/** The lines of one source text that call a method named `query` (a statement run), comments and strings aside. */
export function queryCallLines(text: string, fileName = 'module.ts'): number[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS)
  const lines: number[] = []
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      (ts.isPropertyAccessExpression(node.expression) || ts.isPropertyAccessChain(node.expression)) &&
      node.expression.name.text === 'query'
    )
      lines.push(source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1)
    ts.forEachChild(node, visit)
  }
  visit(source)
  return lines
}

/** Every `.query(` call in a module of `srcDir` outside the owner folder, as `module:line`. */
export function statementsOutsideOwner(srcDir: string, owner = DATABASE_OWNER): string[] {
  return sourceFiles(srcDir)
    .map((file) => relative(srcDir, file))
    .filter((module) => folderOf(module) !== owner)
    .flatMap((module) =>
      queryCallLines(readFileSync(join(srcDir, module), 'utf8'), module).map(
        (line) => `${module}:${line} runs a statement: SQL lives in src/${owner}`,
      ),
    )
    .sort()
}

/**
 * The lines of one source text that read a `FLEETKIT_` variable by name (`env.FLEETKIT_X`, `env?.FLEETKIT_X`,
 * `env['FLEETKIT_X']`), comments and strings aside: a library that does so decides what a command should.
 */
export function variableReadLines(text: string, fileName = 'module.ts'): number[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS)
  const lines: number[] = []
  const visit = (node: ts.Node): void => {
    const name =
      ts.isPropertyAccessExpression(node) || ts.isPropertyAccessChain(node)
        ? node.name.text
        : ts.isElementAccessExpression(node) && ts.isStringLiteralLike(node.argumentExpression)
          ? node.argumentExpression.text
          : undefined
    if (name?.startsWith('FLEETKIT_')) lines.push(source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1)
    ts.forEachChild(node, visit)
  }
  visit(source)
  return lines
}

/** Every read of a `FLEETKIT_` variable in a module of `folder` (a library the commands configure), as `module:line`. */
export function variableReadsIn(srcDir: string, folder: string): string[] {
  return sourceFiles(srcDir)
    .map((file) => relative(srcDir, file))
    .filter((module) => folderOf(module) === folder)
    .flatMap((module) =>
      variableReadLines(readFileSync(join(srcDir, module), 'utf8'), module).map(
        (line) => `${module}:${line} reads a FLEETKIT_ variable: the command resolves it and passes an option`,
      ),
    )
    .sort()
}

/** The import cycles among modules of src/ (strongly connected components), each as its sorted modules. */
export function importCycles(graph: ModuleGraph): string[][] {
  // Tarjan's algorithm; recursive, which is fine at src/'s few hundred modules.
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[][] = []
  const edges = (module: string) =>
    (graph.modules.get(module) ?? []).map((i) => i.target).filter((t) => graph.modules.has(t))
  const connect = (module: string): void => {
    index.set(module, next)
    low.set(module, next)
    next++
    stack.push(module)
    onStack.add(module)
    for (const target of edges(module)) {
      if (!index.has(target)) {
        connect(target)
        low.set(module, Math.min(low.get(module)!, low.get(target)!))
      } else if (onStack.has(target)) low.set(module, Math.min(low.get(module)!, index.get(target)!))
    }
    if (low.get(module) === index.get(module)) {
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== module)
      if (component.length > 1 || edges(module).includes(module)) cycles.push(component.sort())
    }
  }
  for (const module of graph.modules.keys()) if (!index.has(module)) connect(module)
  return cycles
}

/** Every module of src/ that `entries` reach through imports (themselves included). */
export function closureOf(graph: ModuleGraph, entries: readonly string[]): Set<string> {
  const seen = new Set<string>()
  const queue = [...entries]
  while (queue.length > 0) {
    const module = queue.pop()!
    if (seen.has(module)) continue
    seen.add(module)
    for (const { target } of graph.modules.get(module) ?? []) if (graph.modules.has(target)) queue.push(target)
  }
  return seen
}
