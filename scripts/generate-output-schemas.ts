// Generates schema/output/NAME.schema.json, the schema of every `--json` output, from the
// TypeScript type the command returns (schema/output-types.json names it), so a schema cannot
// drift from what the code prints. Constraints a type cannot say (a pattern, a format, a
// minimum) are JSDoc tags on the type (@pattern, @format date-time, @minLength 1, ...).
//   npm run schemas            writes every schema and removes those no longer in the map
// test/unit/schema/output-schemas.test.ts regenerates in memory and fails on any difference.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import {
  type CompletedConfig,
  createFormatter,
  createParser,
  DEFAULT_CONFIG,
  SchemaGenerator,
} from 'ts-json-schema-generator'
import ts from 'typescript'

type Schema = Record<string, unknown>

interface OutputEntry {
  title: string
  /** `path#TypeName` of what the command returns; absent for an output that is only ever an error. */
  result?: string
  /** `path#TypeName` of the error envelope's `data`. */
  errorData?: string
  /** The codes whose `data` must be present and match errorData in full; other codes' data is open. */
  errorDataRequiredFor?: string[]
}

interface OutputMap {
  neverInErrorData: string[]
  envelope: string
  schemas: Record<string, OutputEntry>
}

export const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const MAP_FILE = 'schema/output-types.json'
export const OUTPUT_DIR = 'schema/output'

const DRAFT = 'https://json-schema.org/draft/2020-12/schema'
const ID_BASE = 'https://fleetkit.dev/schema/output/'

const CONFIG: CompletedConfig = {
  ...DEFAULT_CONFIG,
  expose: 'export',
  topRef: false,
  jsDoc: 'extended',
  sortProps: false,
  strictTuples: true,
  skipTypeCheck: true, // tsc checks the types; the generator only reads them
  additionalProperties: false,
  encodeRefs: false,
  functions: 'fail',
}

export function readOutputMap(root = packageRoot): OutputMap {
  return JSON.parse(readFileSync(join(root, MAP_FILE), 'utf8')) as OutputMap
}

/** Every schema the map names, as the text of its file, generated from one compiled program. */
export function generateOutputSchemas(root = packageRoot): Map<string, string> {
  const map = readOutputMap(root)
  const refs = new Set([map.envelope])
  for (const entry of Object.values(map.schemas)) {
    if (entry.result) refs.add(entry.result)
    if (entry.errorData) refs.add(entry.errorData)
  }
  const types = new TypeReader(root, [...refs])
  const envelope = types.schemaOf(map.envelope)
  const out = new Map<string, string>()
  for (const [name, entry] of Object.entries(map.schemas)) {
    const schema = outputSchema(name, entry, map, envelope, types)
    out.set(`${name}.schema.json`, `${JSON.stringify(schema, null, 2)}\n`)
  }
  return out
}

function outputSchema(
  name: string,
  entry: OutputEntry,
  map: OutputMap,
  envelope: Generated,
  types: TypeReader,
): Schema {
  const defs = new Defs(name)
  defs.add(envelope.defs)
  const error = errorBranch(entry, map, envelope.schema, types, defs)
  const head = { $schema: DRAFT, $id: `${ID_BASE}${name}.schema.json`, title: entry.title }
  if (!entry.result) return { ...head, ...error, ...defs.section() }
  const result = types.schemaOf(entry.result)
  defs.add(result.defs)
  const success = {
    type: 'object',
    required: ['status', 'result'],
    additionalProperties: false,
    properties: { status: { const: 0 }, result: result.schema },
  }
  return { ...head, oneOf: [success, error], ...defs.section() }
}

/** The error envelope, its `data` typed by the entry and never carrying a secret's key. */
function errorBranch(entry: OutputEntry, map: OutputMap, envelope: Schema, types: TypeReader, defs: Defs): Schema {
  const properties = { ...(envelope.properties as Record<string, Schema>) }
  const noSecret = { not: { anyOf: map.neverInErrorData.map((key) => ({ required: [key] })) } }
  let data: Schema = { type: 'object', ...noSecret }
  let conditional: Schema = {}
  if (entry.errorData) {
    const typed = types.schemaOf(entry.errorData)
    defs.add(typed.defs)
    // Other codes put other keys in data: only the typed keys are checked, and are required
    // (with data itself) only for the codes named.
    const { required, additionalProperties: _closed, ...open } = typed.schema
    data = { ...open, ...noSecret }
    if (entry.errorDataRequiredFor) {
      conditional = {
        if: { properties: { code: { enum: entry.errorDataRequiredFor } } },
        then: { required: ['data'], properties: { data: { type: 'object', required } } },
      }
    }
  }
  properties.data = data
  return { ...envelope, properties, ...conditional }
}

interface Generated {
  schema: Schema
  defs: Record<string, Schema>
}

/** Named types shared within one output schema, under $defs; one name, one definition. */
class Defs {
  private readonly all: Record<string, Schema> = {}
  constructor(private readonly output: string) {}

  add(defs: Record<string, Schema>): void {
    for (const [name, schema] of Object.entries(defs)) {
      const seen = this.all[name]
      if (seen && JSON.stringify(seen) !== JSON.stringify(schema)) {
        throw new Error(`${this.output}: two different types named ${name}; rename one`)
      }
      this.all[name] = schema
    }
  }

  section(): Schema {
    return Object.keys(this.all).length === 0 ? {} : { $defs: this.all }
  }
}

/** One TypeScript program over every named file; each `path#TypeName` resolved in its own file. */
class TypeReader {
  private readonly program: ts.Program
  private readonly generator: SchemaGenerator

  constructor(
    private readonly root: string,
    refs: string[],
  ) {
    const tsconfig = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile.bind(ts.sys))
    const { options } = ts.parseJsonConfigFileContent(tsconfig.config, ts.sys, root)
    const files = [...new Set(refs.map((ref) => join(root, splitRef(ref).path)))]
    this.program = ts.createProgram(files, { ...options, noEmit: true })
    this.generator = new SchemaGenerator(
      this.program,
      createParser(this.program, CONFIG),
      createFormatter(CONFIG),
      CONFIG,
    )
  }

  schemaOf(ref: string): Generated {
    const generated = this.generator.createSchemaFromNodes([this.declaration(ref)]) as Schema
    const { $schema: _draft, definitions, ...schema } = generated
    return toDefs({ schema, defs: (definitions ?? {}) as Record<string, Schema> })
  }

  private declaration(ref: string): ts.Node {
    const { path, name } = splitRef(ref)
    const file = this.program.getSourceFile(join(this.root, path))
    if (!file) throw new Error(`${ref}: no such file`)
    const checker = this.program.getTypeChecker()
    const module = checker.getSymbolAtLocation(file)
    let symbol = module && checker.getExportsOfModule(module).find((s) => s.name === name)
    if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol)
    const declaration = symbol?.declarations?.find(
      (d) => ts.isInterfaceDeclaration(d) || ts.isTypeAliasDeclaration(d) || ts.isEnumDeclaration(d),
    )
    if (!declaration) throw new Error(`${ref}: ${path} exports no type ${name}`)
    return declaration
  }
}

function splitRef(ref: string): { path: string; name: string } {
  const [path, name] = ref.split('#')
  if (!path || !name) throw new Error(`${ref}: expected path#TypeName`)
  return { path, name }
}

/** The generator writes draft-07 `definitions`; the output schemas are 2020-12 with `$defs`. */
function toDefs(generated: Generated): Generated {
  const text = JSON.stringify(generated).replaceAll('"#/definitions/', '"#/$defs/')
  return JSON.parse(text) as Generated
}

/** Writes every generated schema and removes any schema/output file the map no longer names. */
export function writeOutputSchemas(root = packageRoot): string[] {
  const generated = generateOutputSchemas(root)
  const dir = join(root, OUTPUT_DIR)
  for (const file of readdirSync(dir)) {
    if (file.endsWith('.schema.json') && !generated.has(file)) rmSync(join(dir, file))
  }
  for (const [file, text] of generated) writeFileSync(join(dir, file), text)
  return [...generated.keys()]
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const files = writeOutputSchemas()
  process.stdout.write(`wrote ${files.length} schemas to ${OUTPUT_DIR}/\n`)
}
