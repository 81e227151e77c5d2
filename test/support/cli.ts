// Runs the real CLI (the build when it is current, else the source) through the one process
// runner, and checks a `--json` envelope against its schema/output/<name>.schema.json.
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'

import { packagePath } from '../../src/package-root.js'
import { overlayEnv, runProcess } from './process.js'

export interface CliRun {
  code: number
  stdout: string
  stderr: string
  /** The parsed `--json` output; `{}` without `--json` or when nothing was printed. */
  json: any // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface CliOptions {
  /** Defaults to the package root, where `examples/` and relative paths in tests resolve. */
  cwd?: string
  /** Laid over this process's environment; a variable set to `undefined` is removed. */
  env?: NodeJS.ProcessEnv
  input?: string
  timeout?: number
}

let entry: string | undefined

/**
 * The `fleetkit` entry a test runs: the built CLI (`bin/run.js`, what an operator runs) when the
 * build is newer than every file under src/ and package.json, else the source (`bin/dev.js`).
 * scripts/test builds before mocha, so a full run starts each command in about a third of the
 * time; a test run straight after an edit, without a build, still runs the edited source.
 */
export function fleetkitEntry(): string {
  entry ??= buildIsCurrent() ? packagePath('bin', 'run.js') : packagePath('bin', 'dev.js')
  return entry
}

function buildIsCurrent(): boolean {
  // `npm run build` writes the manifest after tsc: its time is when the build finished.
  const manifest = packagePath('oclif.manifest.json')
  if (!existsSync(manifest) || !existsSync(packagePath('dist', 'commands'))) return false
  const builtAt = statSync(manifest).mtimeMs
  if (statSync(packagePath('package.json')).mtimeMs > builtAt) return false
  for (const file of readdirSync(packagePath('src'), { withFileTypes: true, recursive: true })) {
    if (file.isFile() && statSync(join(file.parentPath, file.name)).mtimeMs > builtAt) return false
  }
  return true
}

/** Runs `fleetkit ARGS` and returns how it ended; a non-zero exit is a result, never a throw. */
export async function runFleetkit(args: string[], options: CliOptions = {}): Promise<CliRun> {
  // The caller's own FLEETKIT_DEFINITION must not leak into a test that does not set it.
  const env = overlayEnv({ FLEETKIT_DEFINITION: undefined, ...options.env })
  const result = await runProcess(process.execPath, [fleetkitEntry(), ...args], {
    cwd: options.cwd ?? packagePath(),
    env,
    ...(options.input === undefined ? {} : { input: options.input }),
    ...(options.timeout === undefined ? {} : { timeoutMs: options.timeout }),
  })
  const json = args.includes('--json') && result.stdout.trim() !== '' ? JSON.parse(result.stdout) : {}
  return { code: result.code, stdout: result.stdout, stderr: result.stderr, json }
}

// strictRequired stays off: the schemas say "no secret here" as `not: {anyOf: [{required: [...]}]}`,
// which names properties the subschema does not define, on purpose.
const ajv = new Ajv2020.default({ allErrors: true, strict: true, strictRequired: false })
addFormats.default(ajv)
const validators = new Map<string, ReturnType<typeof ajv.compile>>()

/** Asserts that `json` matches schema/output/<name>.schema.json (compiled once per name). */
export function assertMatchesOutputSchema(name: string, json: unknown): void {
  let validate = validators.get(name)
  if (!validate) {
    validate = ajv.compile(
      JSON.parse(readFileSync(packagePath('schema', 'output', `${name}.schema.json`), 'utf8')) as object,
    )
    validators.set(name, validate)
  }
  assert.ok(validate(json), `${name}.schema.json: ${JSON.stringify(validate.errors, null, 2)}`)
}
