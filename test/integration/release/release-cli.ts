// Test helpers for the release suites: run the real `fleetkit release ...` with --json,
// validate its envelope against schema/output, and build fake agents and openssl keys.
import { chmod, mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

import { assertMatchesOutputSchema, type CliRun, runFleetkit } from '../../support/cli.js'
import { runProcessOk } from '../../support/process.js'

/** Runs a helper program (openssl, tar, sha256sum) and throws with its stderr unless it exits 0. */
export const run = runProcessOk

/** Runs `fleetkit release COMMAND ARGS --json` and checks the envelope against its schema. */
export async function releaseJson(command: 'keygen' | 'pack' | 'sign' | 'verify', args: string[]): Promise<CliRun> {
  const result = await releaseCli(command, [...args, '--json'])
  assertMatchesOutputSchema(`release-${command}`, result.json)
  return result
}

export function releaseCli(command: string, args: string[]): Promise<CliRun> {
  return runFleetkit(['release', command, ...args])
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
  const der = (await run('openssl', ['pkey', '-pubin', '-in', pub, '-outform', 'DER'])).stdoutBytes
  return { key, pub, raw: der.subarray(der.length - 32).toString('base64') }
}
