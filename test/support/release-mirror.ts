// A signed release of the real agent bundle, served over HTTPS from this machine: `fleetkit
// release pack`, an Ed25519 signature by openssl alone, and a mirror whose CA the test made.
import { createPublicKey } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { type Server, createServer } from 'node:https'
import { dirname, join, normalize } from 'node:path'

import { packagePath } from '../../src/package-root.js'
import { fleetkitEntry } from './cli.js'
import { runProcessOk } from './process.js'

/** A CA and a server certificate for IP:127.0.0.1 (and `extraIps`), made with openssl. */
export async function releaseMirrorPki(
  dir: string,
  extraIps: string[] = [],
): Promise<{ caFile: string; key: string; cert: string }> {
  await mkdir(dir, { recursive: true })
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']
  await runProcessOk('openssl', [
    'req',
    '-x509',
    ...ec,
    '-subj',
    '/CN=fleetkit test release CA',
    '-days',
    '2',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
    '-keyout',
    join(dir, 'ca.key'),
    '-out',
    join(dir, 'ca.pem'),
  ])
  await runProcessOk('openssl', [
    'req',
    ...ec,
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    join(dir, 'server.key'),
    '-out',
    join(dir, 'server.csr'),
  ])
  const sans = ['127.0.0.1', ...extraIps].map((ip) => `IP:${ip}`).join(',')
  await writeFile(
    join(dir, 'server.ext'),
    `subjectAltName=${sans}\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n`,
  )
  await runProcessOk('openssl', [
    'x509',
    '-req',
    '-in',
    join(dir, 'server.csr'),
    '-CA',
    join(dir, 'ca.pem'),
    '-CAkey',
    join(dir, 'ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    join(dir, 'server.ext'),
    '-out',
    join(dir, 'server.pem'),
  ])
  return {
    caFile: join(dir, 'ca.pem'),
    key: await readFile(join(dir, 'server.key'), 'utf8'),
    cert: await readFile(join(dir, 'server.pem'), 'utf8'),
  }
}

/** Serves the files under `root` over HTTPS on 127.0.0.1 (GET only, no listings); every path asked for goes to `requested`. */
export function serveFiles(
  root: string,
  tls: { key: string; cert: string },
  requested: string[],
): Promise<{ server: Server; port: number }> {
  const server = createServer(tls, (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'https://127.0.0.1').pathname))
    requested.push(path)
    readFile(join(root, path)).then(
      (body) => res.writeHead(200, { 'content-length': body.length }).end(body),
      () => res.writeHead(404).end(),
    )
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      resolve({ server, port: typeof address === 'object' && address ? address.port : 0 })
    })
  })
}

/**
 * Packs BUNDLE as release VERSION for amd64 and arm64 under DIR/www/fleetkit-agent/VERSION and signs
 * its SHA256SUMS with a new Ed25519 key; returns the raw public key (base64) the definition pins.
 */
export async function packSignedRelease(
  dir: string,
  bundleBytes: Buffer,
  version: string,
): Promise<{ wwwRoot: string; publicKey: string }> {
  for (const arch of ['amd64', 'arm64']) {
    await mkdir(join(dir, 'dist', `linux-${arch}`), { recursive: true })
    await writeFile(join(dir, 'dist', `linux-${arch}`, 'fleetkit-agent'), bundleBytes, { mode: 0o755 })
  }
  const releaseDir = join(dir, 'www', 'fleetkit-agent', version)
  await mkdir(dirname(releaseDir), { recursive: true })
  await runProcessOk(
    process.execPath,
    [fleetkitEntry(), 'release', 'pack', '--version', version, '--input', join(dir, 'dist'), '--output', releaseDir],
    { cwd: packagePath() },
  )
  await mkdir(join(dir, 'keys'), { recursive: true })
  const signingKey = join(dir, 'keys', 'release.key')
  await runProcessOk('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', signingKey])
  await runProcessOk('openssl', [
    'pkeyutl',
    '-sign',
    '-rawin',
    '-inkey',
    signingKey,
    '-in',
    join(releaseDir, 'SHA256SUMS'),
    '-out',
    join(dir, 'keys', 'sums.sig'),
  ])
  await writeFile(
    join(releaseDir, 'SHA256SUMS.sig'),
    (await readFile(join(dir, 'keys', 'sums.sig'))).toString('base64'),
  )
  const publicKey = createPublicKey(await readFile(signingKey, 'utf8'))
    .export({ type: 'spki', format: 'der' })
    .subarray(-32)
    .toString('base64')
  return { wwwRoot: join(dir, 'www'), publicKey }
}
