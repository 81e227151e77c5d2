// Test helpers for the release suites: run the real `fleetkit release ...` with --json,
// validate its envelope against schema/output, and build fake agents and openssl keys.
import { execFile } from 'node:child_process'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'

import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'

export const run = promisify(execFile)
const repo = new URL('../../../', import.meta.url).pathname

const ajv = new Ajv2020({ allErrors: true })
;(addFormats as unknown as (a: Ajv2020) => void)(ajv)

async function schemaFor(command: string) {
  const path = join(repo, 'schema', 'output', `release-${command}.schema.json`)
  return ajv.getSchema(path) ?? ajv.compile({ ...JSON.parse(await readFile(path, 'utf8')), $id: path })
}

export interface CliRun {
  code: number
  stdout: string
  stderr: string
  json: Record<string, unknown>
}

/** Runs `fleetkit release COMMAND ARGS --json` and checks the envelope against its schema. */
export async function releaseJson(command: 'pack' | 'sign' | 'verify', args: string[]): Promise<CliRun> {
  const result = await releaseCli(command, [...args, '--json'])
  const json = JSON.parse(result.stdout) as Record<string, unknown>
  const validate = await schemaFor(command)
  if (!validate(json)) throw new Error(`release ${command} --json does not match its schema: ${JSON.stringify(validate.errors)}\n${result.stdout}`)
  return { ...result, json }
}

export async function releaseCli(command: string, args: string[]): Promise<Omit<CliRun, 'json'>> {
  try {
    const { stdout, stderr } = await run('node', ['bin/dev.js', 'release', command, ...args], { cwd: repo })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

/** DIST/linux-ARCH/fleetkit-agent: a script printing its version, standing in for the bundle. */
export async function fakeAgent(dist: string, arch: 'amd64' | 'arm64', version: string): Promise<string> {
  const path = join(dist, `linux-${arch}`, 'fleetkit-agent')
  await mkdir(join(dist, `linux-${arch}`), { recursive: true })
  await writeFile(path, `#!/bin/sh\necho "fleetkit-agent ${version}"\n`)
  await chmod(path, 0o755)
  return path
}

/** An Ed25519 key pair written by openssl itself: KEY (PKCS#8 PEM, 0600) and KEY.pub (SPKI PEM). */
export async function opensslKeyPair(dir: string, name: string): Promise<{ key: string; pub: string; raw: string }> {
  const key = join(dir, `${name}.key`)
  const pub = join(dir, `${name}.pub`)
  await run('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', key])
  await chmod(key, 0o600)
  await run('openssl', ['pkey', '-in', key, '-pubout', '-out', pub])
  const der = (await run('openssl', ['pkey', '-pubin', '-in', pub, '-outform', 'DER'], { encoding: 'buffer' })).stdout as unknown as Buffer
  return { key, pub, raw: der.subarray(der.length - 32).toString('base64') }
}
