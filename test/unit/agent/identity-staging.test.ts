import assert from 'node:assert/strict'
import { chmod, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { commitStaged, writeFileAtomic, writeStaged } from '../../../src/fs/atomic-file.js'
import { loadAgentConfig } from '../../../src/agent/config.js'
import { enroll } from '../../../src/agent/enroll.js'
import { identityPaths, identityStaged, loadIdentity, stageIdentity } from '../../../src/agent/identity.js'
import { silentLogger } from '../../../src/log/logger.js'
import type { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { makeTestIdentity } from '../../support/agent-identity.js'

const mode = async (path: string) => (await stat(path)).mode & 0o777

describe('agent identity staging', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-agent-stage-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('writes a file atomically with mode 0600 and leaves no temp file, even over a loose leftover', async () => {
    const target = join(dir, 'agent.pem')
    await writeFile(`${target}.staged`, 'half-written', { mode: 0o644 })
    await writeStaged(target, 'certificate')
    await commitStaged(target)
    assert.equal(await readFile(target, 'utf8'), 'certificate')
    assert.equal(await mode(target), 0o600)
    assert.deepEqual(await readdir(dir), ['agent.pem'])
  })

  it('replaces an existing file whole', async () => {
    const target = join(dir, 'gateway-ca.pem')
    await writeFileAtomic(target, 'old')
    await writeFileAtomic(target, 'new bundle')
    assert.equal(await readFile(target, 'utf8'), 'new bundle')
  })

  it('stages key, certificate and CA bundle 0600 in a 0700 directory and loads them back', async () => {
    const pki = join(dir, 'pki')
    const id = await makeTestIdentity('node-1', new Date('2026-01-01T00:00:00Z'), new Date('2026-01-02T00:00:00Z'))
    await stageIdentity(pki, id.keyPem, id.certificatePem, id.caPem)
    const paths = identityPaths(pki)
    for (const path of Object.values(paths)) assert.equal(await mode(path), 0o600, path)
    assert.equal(await mode(pki), 0o700)
    assert.deepEqual((await readdir(pki)).sort(), ['agent.key', 'agent.pem', 'gateway-ca.pem'])
    const loaded = await loadIdentity(pki, join(dir, 'absent-ca.pem'))
    assert.equal(loaded.window.notAfter.toISOString(), '2026-01-02T00:00:00.000Z')
    assert.equal(loaded.caPem, id.caPem)
  })

  it('finishes a staging interrupted between the key and the certificate rename', async () => {
    const pki = join(dir, 'pki')
    const first = await makeTestIdentity('node-1', new Date('2026-01-01T00:00:00Z'), new Date('2026-01-02T00:00:00Z'))
    await stageIdentity(pki, first.keyPem, first.certificatePem, first.caPem)
    const second = await makeTestIdentity('node-1', new Date('2026-01-01T12:00:00Z'), new Date('2026-01-02T12:00:00Z'))
    // What a crash leaves: the new key renamed in place, the new certificate still staged.
    const paths = identityPaths(pki)
    await writeFile(paths.key, second.keyPem, { mode: 0o600 })
    await writeFile(`${paths.certificate}.staged`, second.certificatePem, { mode: 0o600 })
    const loaded = await loadIdentity(pki, paths.caBundle)
    assert.equal(loaded.certificatePem, second.certificatePem)
    assert.deepEqual((await readdir(pki)).sort(), ['agent.key', 'agent.pem', 'gateway-ca.pem'])
  })

  it('refuses a key that does not match the certificate (IDENTITY_INVALID) and reports a missing one (IDENTITY_MISSING)', async () => {
    const pki = join(dir, 'pki')
    await assert.rejects(loadIdentity(pki, join(dir, 'ca.pem')), (e: FleetkitError) => e.code === 'IDENTITY_MISSING')
    const a = await makeTestIdentity('node-1', new Date('2026-01-01T00:00:00Z'), new Date('2026-01-02T00:00:00Z'))
    const b = await makeTestIdentity('node-1', new Date('2026-01-01T00:00:00Z'), new Date('2026-01-02T00:00:00Z'))
    await stageIdentity(pki, a.keyPem, b.certificatePem, a.caPem)
    await assert.rejects(loadIdentity(pki, join(dir, 'ca.pem')), (e: FleetkitError) => e.code === 'IDENTITY_INVALID')
  })

  it('refuses a staged key that group or others may read (AGENT_KEY_PERMISSIONS), and loads it again once it is 0600', async () => {
    const now = Date.now()
    const identity = await makeTestIdentity('node-p', new Date(now - 60_000), new Date(now + 3_600_000))
    const pki = join(dir, 'pki')
    await stageIdentity(pki, identity.keyPem, identity.certificatePem, identity.caPem)
    for (const loose of [0o640, 0o604, 0o602, 0o620]) {
      await chmod(identityPaths(pki).key, loose)
      await assert.rejects(
        loadIdentity(pki, join(dir, 'none.pem')),
        (e: FleetkitError) => e.code === 'AGENT_KEY_PERMISSIONS' && e.message.includes(`mode 0${loose.toString(8)}`),
      )
    }
    await chmod(identityPaths(pki).key, 0o400)
    assert.equal((await loadIdentity(pki, join(dir, 'none.pem'))).keyPem, identity.keyPem)
  })

  it('enroll is a no-op (no request, secret kept) when an identity is already staged', async () => {
    const pki = join(dir, 'pki')
    const secretFile = join(dir, 'enrollment-secret')
    await writeFile(secretFile, 'a'.repeat(64), { mode: 0o600 })
    const id = await makeTestIdentity('node-1', new Date('2026-01-01T00:00:00Z'), new Date('2026-01-02T00:00:00Z'))
    await stageIdentity(pki, id.keyPem, id.certificatePem, id.caPem)
    const before = await readFile(join(pki, 'agent.pem'), 'utf8')
    // Port 9 on loopback: a request would fail, so a pass proves none was made.
    const config = loadAgentConfig({
      env: {},
      flags: {
        config: join(dir, 'none.env'),
        'node-id': 'node-1',
        'enroll-url': 'https://127.0.0.1:9',
        'ca-file': join(dir, 'ca.pem'),
        'secret-file': secretFile,
        'pki-dir': pki,
      },
      readFile: () => '',
    })
    const result = await enroll(config, { log: silentLogger })
    assert.equal(result.outcome, 'already-enrolled')
    assert.equal(await readFile(secretFile, 'utf8'), 'a'.repeat(64))
    assert.equal(await readFile(join(pki, 'agent.pem'), 'utf8'), before)
    assert.ok(await identityStaged(pki))
  })

  it('enroll without identity and without a secret fails with ENROLLMENT_SECRET_MISSING', async () => {
    const config = loadAgentConfig({
      env: {},
      flags: {
        'node-id': 'node-1',
        'enroll-url': 'https://127.0.0.1:9',
        'ca-file': join(dir, 'ca.pem'),
        'secret-file': join(dir, 'nope'),
        'pki-dir': join(dir, 'pki'),
      },
      readFile: () => '',
    })
    await assert.rejects(
      enroll(config, { log: silentLogger }),
      (e: FleetkitError) => e.code === 'ENROLLMENT_SECRET_MISSING',
    )
  })
})
