// Runs the real CLI from source (`node bin/dev.js ARGS`) the way the integration tests need it,
// and checks a `--json` envelope against its schema/output/<name>.schema.json.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'

import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'

import { packagePath } from '../../src/package-root.js'

const exec = promisify(execFile)

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
  maxBuffer?: number
  timeout?: number
}

/** Runs `fleetkit ARGS` and returns how it ended; a non-zero exit is a result, never a throw. */
export async function runFleetkit(args: string[], options: CliOptions = {}): Promise<CliRun> {
  // The caller's own FLEETKIT_DEFINITION must not leak into a test that does not set it.
  const env: NodeJS.ProcessEnv = { ...process.env }
  delete env.FLEETKIT_DEFINITION
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name]
    else env[name] = value
  }
  const parse = (stdout: string) => (args.includes('--json') && stdout.trim() !== '' ? JSON.parse(stdout) : {})
  const running = exec(process.execPath, [packagePath('bin', 'dev.js'), ...args], {
    cwd: options.cwd ?? packagePath(),
    env,
    maxBuffer: options.maxBuffer ?? 64 * 1024 * 1024,
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
  })
  if (options.input !== undefined) running.child.stdin?.end(options.input)
  try {
    const { stdout, stderr } = await running
    return { code: 0, stdout, stderr, json: parse(stdout) }
  } catch (error) {
    const e = error as { code?: unknown; stdout?: string; stderr?: string }
    // A process killed by a signal or the timeout has no exit code: report it as a failure (1).
    const code = typeof e.code === 'number' ? e.code : 1
    return { code, stdout: e.stdout ?? '', stderr: e.stderr ?? '', json: parse(e.stdout ?? '') }
  }
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
    validate = ajv.compile(JSON.parse(readFileSync(packagePath('schema', 'output', `${name}.schema.json`), 'utf8')) as object)
    validators.set(name, validate)
  }
  assert.ok(validate(json), `${name}.schema.json: ${JSON.stringify(validate.errors, null, 2)}`)
}
