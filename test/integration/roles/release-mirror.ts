// A signed release mirror for the agent role suites: stand-in agent binaries (a shell script that
// prints its version and, for `run`, sleeps), packed by `fleetkit release pack`, signed with openssl
// and served over HTTPS on the operator address with a private CA (the `--ca-file` path).
import { createPublicKey } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { type Server, createServer } from 'node:https'
import { join, normalize } from 'node:path'

import { ensureBridge, OPERATOR_ADDRESS } from '../../hosts/index.js'
import { runFleetkit } from '../../support/cli.js'
import { runProcessOk } from '../../support/process.js'

export interface ReleaseMirror {
  /** release.url: <url>/<version>/SHA256SUMS ... */
  url: string
  /** base64 of the raw Ed25519 release key (fleet.yaml release.publicKey). */
  publicKey: string
  /** The mirror's CA (PEM), the role's agent_update_ca_pem. */
  caPem: string
  close(): Promise<void>
}

/** The stand-in agent of VERSION: enough for the verifier (--version) and for a unit that stays active. */
export function standInAgent(version: string): string {
  return `#!/bin/sh\n# fleetkit-agent stand-in ${version}\ncase "$1" in\n  --version) echo "${version}" ;;\n  run) exec sleep infinity ;;\n  *) exit 0 ;;\nesac\n`
}

/** `binaries`: the file a version ships instead of the stand-in (the real agent bundle, for a host that must enroll). */
export async function startReleaseMirror(
  dir: string,
  versions: string[],
  binaries: Record<string, Buffer> = {},
): Promise<ReleaseMirror> {
  await mkdir(join(dir, 'keys'), { recursive: true })
  const signingKey = join(dir, 'keys', 'release.key')
  await runProcessOk('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', signingKey])
  for (const version of versions) {
    const input = join(dir, 'dist', version)
    for (const arch of ['amd64', 'arm64']) {
      await mkdir(join(input, `linux-${arch}`), { recursive: true })
      await writeFile(join(input, `linux-${arch}`, 'fleetkit-agent'), binaries[version] ?? standInAgent(version), {
        mode: 0o755,
      })
    }
    const out = join(dir, 'www', 'fleetkit-agent', version)
    const packed = await runFleetkit(['release', 'pack', '--version', version, '--input', input, '--output', out])
    if (packed.code !== 0) throw new Error(`release pack failed: ${packed.stderr}`)
    await runProcessOk('openssl', [
      'pkeyutl',
      '-sign',
      '-rawin',
      '-inkey',
      signingKey,
      '-in',
      join(out, 'SHA256SUMS'),
      '-out',
      join(dir, 'keys', `${version}.sig`),
    ])
    await writeFile(
      join(out, 'SHA256SUMS.sig'),
      (await readFile(join(dir, 'keys', `${version}.sig`))).toString('base64'),
    )
  }
  const publicKey = createPublicKey(await readFile(signingKey, 'utf8'))
    .export({ type: 'spki', format: 'der' })
    .subarray(-32)
    .toString('base64')

  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']
  await runProcessOk('openssl', [
    'req',
    '-x509',
    ...ec,
    '-subj',
    '/CN=fleetkit roles test mirror CA',
    '-days',
    '2',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
    '-keyout',
    join(dir, 'keys', 'ca.key'),
    '-out',
    join(dir, 'keys', 'ca.pem'),
  ])
  await runProcessOk('openssl', [
    'req',
    ...ec,
    '-subj',
    `/CN=${OPERATOR_ADDRESS}`,
    '-keyout',
    join(dir, 'keys', 'server.key'),
    '-out',
    join(dir, 'keys', 'server.csr'),
  ])
  await writeFile(
    join(dir, 'keys', 'server.ext'),
    `subjectAltName=IP:${OPERATOR_ADDRESS}\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n`,
  )
  await runProcessOk('openssl', [
    'x509',
    '-req',
    '-in',
    join(dir, 'keys', 'server.csr'),
    '-CA',
    join(dir, 'keys', 'ca.pem'),
    '-CAkey',
    join(dir, 'keys', 'ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    join(dir, 'keys', 'server.ext'),
    '-out',
    join(dir, 'keys', 'server.pem'),
  ])

  const root = join(dir, 'www')
  const server: Server = createServer(
    { key: await readFile(join(dir, 'keys', 'server.key')), cert: await readFile(join(dir, 'keys', 'server.pem')) },
    (req, res) => {
      const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'https://mirror').pathname))
      readFile(join(root, path)).then(
        (body) => res.writeHead(200, { 'content-length': body.length }).end(body),
        () => res.writeHead(404).end(),
      )
    },
  )
  // The operator address lives on the test bridge: on a fresh machine this may be the first host suite to need it.
  await ensureBridge()
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, OPERATOR_ADDRESS, () => {
      const address = server.address()
      resolve(typeof address === 'object' && address ? address.port : 0)
    })
  })
  return {
    url: `https://${OPERATOR_ADDRESS}:${port}/fleetkit-agent`,
    publicKey,
    caPem: await readFile(join(dir, 'keys', 'ca.pem'), 'utf8'),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
