// The demo's agent release: a fresh Ed25519 signing key, the built agent bundle (dist/) packed for
// both architectures by `release pack` and signed by `release sign`, laid out as a mirror serves it.
import { generateKeyPairSync } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

import { packagePath } from '../package-root.js'
import { packRelease } from '../release/pack-release.js'
import { signRelease } from '../release/sign-release.js'
import { makeDirectories } from '../fs/make-directories.js'

export const AGENT_BUNDLE_PATH = packagePath('dist', 'fleetkit-agent.cjs')
/** The path below the mirror's root that fleet.yaml's release.url names. */
export const RELEASE_PATH = 'fleetkit-agent'

export interface DemoRelease {
  version: string
  /** base64 of the raw public key: fleet.yaml's release.publicKey. */
  publicKey: string
  /** The mirror's root directory (holds RELEASE_PATH/VERSION/). */
  mirrorRoot: string
  archives: string[]
}

export async function buildDemoRelease(dir: string): Promise<DemoRelease> {
  const version = (JSON.parse(await readFile(packagePath('package.json'), 'utf8')) as { version: string }).version
  await makeDirectories(dir, 0o700)
  const keyFile = join(dir, 'release-signing.key')
  const { privateKey } = generateKeyPairSync('ed25519')
  await writeFile(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 })
  const bundle = await readFile(AGENT_BUNDLE_PATH)
  const input = join(dir, 'dist')
  for (const arch of ['amd64', 'arm64']) {
    await makeDirectories(join(input, `linux-${arch}`))
    await writeFile(join(input, `linux-${arch}`, 'fleetkit-agent'), bundle, { mode: 0o755 })
  }
  const mirrorRoot = join(dir, 'www')
  const outputDir = join(mirrorRoot, RELEASE_PATH, version)
  await makeDirectories(join(mirrorRoot, RELEASE_PATH))
  const packed = await packRelease({ version, inputDir: input, outputDir })
  const signed = await signRelease({ keyFile, dir: outputDir })
  return { version, publicKey: signed.publicKey, mirrorRoot, archives: packed.archives.map((a) => a.name) }
}
