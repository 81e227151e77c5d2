import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { request } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { startReleaseMirror, type ReleaseMirror } from '../../../src/demo/release-mirror.js'
import { initPki } from '../../../src/pki/init-pki.js'

describe('demo release mirror: the release directory, read-only over HTTPS', () => {
  let dir: string
  let mirror: ReleaseMirror
  let ca: string

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-demo-mirror-'))
    const pki = await initPki({ pkiDir: join(dir, 'pki'), serverNames: ['127.0.0.1'], now: new Date() })
    ca = await readFile(join(pki.pkiDir, 'ca.pem'), 'utf8')
    await mkdir(join(dir, 'www', 'fleetkit-agent', '1.0.0'), { recursive: true })
    await writeFile(join(dir, 'www', 'fleetkit-agent', '1.0.0', 'SHA256SUMS'), 'sums\n')
    await writeFile(join(dir, 'secret.key'), 'outside the root\n')
    mirror = await startReleaseMirror({
      root: join(dir, 'www'),
      keyPem: await readFile(join(pki.pkiDir, 'server.key'), 'utf8'),
      certPem: await readFile(join(pki.pkiDir, 'server.pem'), 'utf8'),
    })
  })

  after(async () => {
    await mirror.close()
    await rm(dir, { recursive: true, force: true })
  })

  function get(path: string, method = 'GET'): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request(`${mirror.url}${path}`, { method, ca, agent: false }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }))
      })
      req.on('error', reject)
      req.end()
    })
  }

  it('serves a file of the release directory to a client that trusts the mirror CA', async () => {
    assert.match(mirror.url, /^https:\/\/127\.0\.0\.1:\d+$/)
    assert.deepEqual(await get('/fleetkit-agent/1.0.0/SHA256SUMS'), { status: 200, body: 'sums\n' })
  })

  it('answers 404 for what is missing, a directory, or a path out of the root; 400 for a bad escape; 405 for anything but GET', async () => {
    assert.equal((await get('/fleetkit-agent/1.0.0/missing')).status, 404)
    assert.equal((await get('/fleetkit-agent/1.0.0')).status, 404)
    assert.equal((await get('/%2e%2e/secret.key')).status, 404)
    assert.equal((await get('/..%2fsecret.key')).status, 404)
    assert.equal((await get('/%zz')).status, 400)
    assert.equal((await get('/fleetkit-agent/1.0.0/SHA256SUMS', 'POST')).status, 405)
  })
})
