// A control host for the host suites: this build of fleetkit and this machine's Node.js copied into a
// container host, as `npm install -g` would put them in place (gateway-install.test.ts and the control-host
// replacement drill run fleetkit on such hosts, never from the repository).
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'

import { packagePath } from '../../src/package-root.js'
import type { ContainerHost } from '../hosts/index.js'
import { runProcessOk } from './process.js'

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))

/** Where the CLI lands on the host: a shell wrapper running /opt/fleetkit/bin/run.js with Node.js 20. */
export const FLEETKIT = '/usr/local/bin/fleetkit'

/** The version the build reports (the release a test signs and publishes). */
export const VERSION = (JSON.parse(await readFile(packagePath('package.json'), 'utf8')) as { version: string }).version

/** What `npm install -g` would put in place: the build, its manifest, the shipped files and the dependencies. */
const PACKAGE_FILES = [
  'bin',
  'dist',
  'package.json',
  'oclif.manifest.json',
  'systemd',
  'schema',
  'policy',
  'src/store/migrations',
  'src/store/embedded/initdb-child.mjs',
  'cloud-init',
  'node_modules',
]

/** Copies the local folder `from` into the host's own root at `to` (its mount namespace, not the overlay). */
export async function copyInto(host: ContainerHost, from: string, to: string): Promise<void> {
  const into = `nsenter -t ${host.initPid} -m -r --`
  await runProcessOk('bash', [
    '-o',
    'pipefail',
    '-c',
    `${into} mkdir -p ${to} && tar -C ${from} -chf - . | ${into} tar -xf - -C ${to} --no-same-owner`,
  ])
}

/**
 * fleetkit and this machine's Node.js into the host: the image's Node.js is Debian's 18, fleetkit needs 20,
 * so this machine's goes to /usr/local/bin. Copied into the container's own mount namespace and root
 * (nsenter -m -r), not over its overlay.
 */
export async function installFleetkit(host: ContainerHost): Promise<void> {
  assert.ok(existsSync(`${repoRoot}/dist/commands`), 'fleetkit is not built: npm run build')
  const into = `nsenter -t ${host.initPid} -m -r --`
  await runProcessOk('bash', [
    '-o',
    'pipefail',
    '-c',
    `${into} mkdir -p /opt/fleetkit /usr/local/bin && ` +
      `tar -C ${repoRoot} -chf - ${PACKAGE_FILES.join(' ')} | ${into} tar -xf - -C /opt/fleetkit --no-same-owner && ` +
      `tar -C "$(dirname "$(readlink -f "$(command -v node)")")" -chf - node | ${into} tar -xf - -C /usr/local/bin --no-same-owner`,
  ])
  await host.sshOk(
    `chmod -R a+rX /opt/fleetkit && printf '#!/bin/sh\\nexec /usr/local/bin/node /opt/fleetkit/bin/run.js "$@"\\n' > ${FLEETKIT} && chmod 0755 ${FLEETKIT}`,
  )
}

/** Polls `probe` each second until it answers, for at most `timeoutMs`. */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 120_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 1000))
  }
}
