// The gateway's 2 s PKI reload cannot cut the fleet off: a half-written set, a mismatched key and
// a valid foreign set are refused (the running set keeps serving every agent, a code is logged);
// `fleetkit ca server-cert` is picked up without a restart.
import assert from 'node:assert/strict'
import { X509Certificate } from 'node:crypto'
import { copyFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect } from 'node:tls'

import { systemClock } from '../../../src/config/clock.js'
import { SETTLE_MS } from '../../../src/fs/stat-signature.js'
import { PkiReloader } from '../../../src/gateway/tls/pki-reloader.js'
import { type Logger, silentLogger } from '../../../src/log/logger.js'
import { initPki } from '../../../src/pki/init-pki.js'
import { readPkiDirectory } from '../../../src/pki/pki-files.js'
import { liveIssuerFingerprints } from '../../../src/store/pki/ca-rotations.js'
import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'
import { startTestGateway, type AgentIdentityFiles, type TestGateway } from '../../support/gateway.js'
import { startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'

const PKI_FILES = ['ca.pem', 'ca.key', 'ca-bundle.pem', 'server.pem', 'server.key']

function servedNames(gw: TestGateway): Promise<string> {
  const url = new URL(gw.agentUrl)
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port), rejectUnauthorized: false }, () => {
      const names = new X509Certificate(socket.getPeerCertificate().raw).subjectAltName ?? ''
      socket.destroy()
      resolve(names)
    })
    socket.on('error', reject)
  })
}

describe('gateway: PKI reload that cannot cut the fleet off', function () {
  this.timeout(120_000)
  let pg: DisposablePostgres
  let gw: TestGateway
  let agent: AgentIdentityFiles
  let scratch: string
  const saved: Record<string, string> = {}
  before(async () => {
    pg = await startDisposablePostgres()
    gw = await startTestGateway({ postgresUrl: pg.url, tuning: { pkiReloadMs: 3_600_000 } })
    await gw.declareNode('node-a')
    agent = await gw.enroll('node-a', await gw.issueSecret('node-a'))
    scratch = await mkdtemp(join(tmpdir(), 'fleetkit-reload-'))
    for (const name of PKI_FILES) saved[name] = await readFile(join(gw.pkiDir, name), 'utf8')
  })
  after(async () => {
    await gw?.close()
    await pg?.stop()
    await rm(scratch, { recursive: true, force: true })
  })
  afterEach(async () => {
    for (const name of PKI_FILES)
      await writeFile(join(gw.pkiDir, name), saved[name]!, { mode: name.endsWith('.key') ? 0o600 : 0o644 })
    await gw.gateway!.reloadPki()
  })

  /** A reloader over the gateway's directory with a logger the test reads. */
  const probe = (logs: { msg: string; fields: Record<string, unknown> }[]) =>
    new PkiReloader({
      dir: gw.pkiDir,
      clock: systemClock,
      logger: ((level, msg, fields) => {
        logs.push({ msg, fields: fields ?? {} })
      }) as Logger,
      current: () => gw.gateway!.currentPkiSet(),
      apply: () => assert.fail('a refused set must not be applied'),
      liveIssuers: (now) => liveIssuerFingerprints(gw.db.pool, now),
    })

  const stillServes = async () => {
    assert.equal(
      (await gw.agent(agent, 'POST', '/v1/agent/heartbeat', { facts: null })).status,
      200,
      'the agent keeps working',
    )
  }

  it('keeps the running set when the bundle is half written', async () => {
    const running = gw.gateway!.currentPkiSet().version
    await writeFile(join(gw.pkiDir, 'ca-bundle.pem'), saved['ca-bundle.pem']!.slice(0, 200))
    assert.equal(await gw.gateway!.reloadPki(), 'kept')
    assert.equal(gw.gateway!.currentPkiSet().version, running)
    const logs: { msg: string; fields: Record<string, unknown> }[] = []
    assert.equal(await probe(logs).check(), 'kept')
    assert.equal(logs[0]?.fields.code, 'PKI_INVALID')
    await stillServes()
  })

  it('keeps the running set when ca.key does not belong to ca.pem', async () => {
    const other = join(scratch, 'other')
    await initPki({ pkiDir: other, now: new Date() })
    await copyFile(join(other, 'ca.key'), join(gw.pkiDir, 'ca.key'))
    assert.equal(await gw.gateway!.reloadPki(), 'kept')
    const logs: { msg: string; fields: Record<string, unknown> }[] = []
    assert.equal(await probe(logs).check(), 'kept')
    assert.equal(logs[0]?.fields.code, 'PKI_INVALID')
    assert.match(String(logs[0]?.fields.error), /ca\.key does not belong to ca\.pem/)
    await stillServes()
  })

  it('keeps the running set when a valid foreign set (another CA) is copied in: it does not trust the live certificates', async () => {
    const foreign = join(scratch, 'foreign')
    await initPki({ pkiDir: foreign, serverNames: ['localhost', '127.0.0.1'], now: new Date() })
    for (const name of PKI_FILES) await copyFile(join(foreign, name), join(gw.pkiDir, name))
    assert.equal(await gw.gateway!.reloadPki(), 'kept')
    const logs: { msg: string; fields: Record<string, unknown> }[] = []
    const reloader = probe(logs)
    assert.equal(await reloader.check(), 'kept')
    assert.equal(logs[0]?.fields.code, 'PKI_SET_UNTRUSTED')
    assert.equal(await reloader.check(), 'kept', 'looked at again (the state may change), logged once')
    assert.equal(logs.length, 1)
    await stillServes()
  })

  it('reads the files again only when their stat changed; a set refused for the state is read at every look', async () => {
    let reads = 0
    const reloader = new PkiReloader({
      dir: gw.pkiDir,
      // Past the settle time: the files this suite just wrote count as settled.
      clock: { now: () => new Date(Date.now() + SETTLE_MS + 1000) },
      logger: silentLogger,
      current: () => gw.gateway!.currentPkiSet(),
      apply: () => assert.fail('the running set is not replaced'),
      liveIssuers: (now) => liveIssuerFingerprints(gw.db.pool, now),
      read: (dir) => {
        reads++
        return readPkiDirectory(dir)
      },
    })
    assert.equal(await reloader.check(), 'unchanged')
    assert.equal(await reloader.check(), 'unchanged')
    assert.equal(reads, 1, 'the second look is a stat of each file')
    // The same bytes written again: a new ctime, so read again (and still the running set).
    await writeFile(join(gw.pkiDir, 'ca-bundle.pem'), saved['ca-bundle.pem']!)
    assert.equal(await reloader.check(), 'unchanged')
    assert.equal(reads, 2)
    const foreign = join(scratch, 'foreign-stat')
    await initPki({ pkiDir: foreign, serverNames: ['localhost', '127.0.0.1'], now: new Date() })
    for (const name of PKI_FILES) await copyFile(join(foreign, name), join(gw.pkiDir, name))
    assert.equal(await reloader.check(), 'kept')
    assert.equal(await reloader.check(), 'kept')
    assert.equal(reads, 4, 'refused for the live certificates: judged again each look')
  })

  it('fleetkit ca server-cert re-issues the server certificate with other names; the same gateway serves it after its reload', async () => {
    assert.doesNotMatch(await servedNames(gw), /gw2\.test/)
    const run = await runFleetkit(
      ['ca', 'server-cert', '--server-name', 'gw2.test', '--server-name', '127.0.0.1', '--json'],
      { env: { FLEETKIT_PKI_DIR: gw.pkiDir } },
    )
    assert.equal(run.code, 0, run.stdout + run.stderr)
    assertMatchesOutputSchema('ca-server-cert', run.json)
    assert.deepEqual(run.json.result.serverNames, ['gw2.test', '127.0.0.1'])
    assert.deepEqual(run.json.result.previousServerNames, ['localhost', '127.0.0.1'])
    assert.equal(await readFile(join(gw.pkiDir, 'ca.pem'), 'utf8'), saved['ca.pem'], 'no new CA')
    assert.equal(await readFile(join(gw.pkiDir, 'server.key'), 'utf8'), saved['server.key'], 'the same key')
    assert.equal(await gw.gateway!.reloadPki(), 'replaced')
    assert.match(await servedNames(gw), /DNS:gw2\.test/)
    await stillServes()
    const bad = await runFleetkit(['ca', 'server-cert', '--server-name', 'not a name', '--json'], {
      env: { FLEETKIT_PKI_DIR: gw.pkiDir },
    })
    assert.equal(bad.json.code, 'USAGE_INVALID')
    assertMatchesOutputSchema('ca-server-cert', bad.json)
  })

  it('fleetkit ca server-cert --new-key replaces server.key (0600) and keeps the names; agents keep working after the reload', async () => {
    const keyBefore = await readFile(join(gw.pkiDir, 'server.key'), 'utf8')
    const servedKey = async () => {
      const url = new URL(gw.agentUrl)
      return new Promise<string>((resolve, reject) => {
        const socket = connect({ host: url.hostname, port: Number(url.port), rejectUnauthorized: false }, () => {
          const cert = new X509Certificate(socket.getPeerCertificate().raw)
          socket.destroy()
          resolve(cert.publicKey.export({ type: 'spki', format: 'der' }).toString('hex'))
        })
        socket.on('error', reject)
      })
    }
    const before = await servedKey()
    const run = await runFleetkit(['ca', 'server-cert', '--new-key', '--json'], {
      env: { FLEETKIT_PKI_DIR: gw.pkiDir },
    })
    assert.equal(run.code, 0, run.stdout + run.stderr)
    assertMatchesOutputSchema('ca-server-cert', run.json)
    assert.equal(run.json.result.newKey, true)
    assert.deepEqual(run.json.result.serverNames, run.json.result.previousServerNames, 'the names stay')
    assert.doesNotMatch(run.stdout, /PRIVATE KEY/)
    const keyAfter = await readFile(join(gw.pkiDir, 'server.key'), 'utf8')
    assert.notEqual(keyAfter, keyBefore)
    assert.equal((await stat(join(gw.pkiDir, 'server.key'))).mode & 0o777, 0o600)
    assert.equal(await gw.gateway!.reloadPki(), 'replaced')
    assert.notEqual(await servedKey(), before, 'the gateway serves the new key')
    await stillServes()
    const nothing = await runFleetkit(['ca', 'server-cert', '--json'], { env: { FLEETKIT_PKI_DIR: gw.pkiDir } })
    assert.equal(nothing.json.code, 'USAGE_INVALID', 'neither names nor --new-key')
  })
})
