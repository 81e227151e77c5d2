// `fleetkit ca rotate` (the real CLI) against a real gateway (in this process, reloading its PKI
// files) and a real PostgreSQL: begin, renewal onto the new CA, refusals, completion, abort, resume.
import assert from 'node:assert/strict'
import { X509Certificate, createHash } from 'node:crypto'
import { readFile, readdir, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { connect } from 'node:tls'

import { certificateFingerprintSha256 } from '../../../src/pki/fingerprint.js'
import { bundleFingerprints } from '../../../src/pki/trust-bundle.js'
import { ISSUANCE_LOCK_KEY, listNodeCertificates } from '../../../src/store/pki/certificates.js'
import { listEvents } from '../../../src/store/events.js'
import { assertMatchesOutputSchema, type CliRun, fleetkitEntry, runFleetkit } from '../../support/cli.js'
import { eventually } from '../../support/eventually.js'
import { httpsJson, startTestGateway, type HttpReply, type TestGateway } from '../../support/gateway.js'
import { makeCsr, nodeKey } from '../../support/pki.js'
import { startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'
import { overlayEnv, startProcess } from '../../support/process.js'

interface Identity {
  nodeId: string
  keyPem: string
  certificatePem: string
}

function rotate(gw: TestGateway, ...args: string[]): Promise<CliRun> {
  return runFleetkit(['ca', 'rotate', '--json', ...args], {
    env: { DATABASE_URL: gw.db.url, FLEETKIT_PKI_DIR: gw.pkiDir },
  })
}

/** The PKI directory's files and their digests (dot files, the PKI lock among them, are not the PKI). */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  for (const name of (await readdir(dir)).filter((n) => !n.startsWith('.')).sort())
    out[name] = createHash('sha256')
      .update(await readFile(join(dir, name)))
      .digest('hex')
  return out
}

/** The fingerprint of the certificate the agent listener presents. */
function servedCertificate(gw: TestGateway): Promise<X509Certificate> {
  const url = new URL(gw.agentUrl)
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port), rejectUnauthorized: false }, () => {
      const der = socket.getPeerCertificate().raw
      socket.destroy()
      resolve(new X509Certificate(der))
    })
    socket.on('error', reject)
  })
}

describe('fleetkit ca rotate', function () {
  this.timeout(180_000)
  let pg: DisposablePostgres
  before(async () => {
    pg = await startDisposablePostgres()
  })
  after(async () => {
    await pg?.stop()
  })

  let gw: TestGateway
  /** What agents trust: the bootstrap bundle, then the bundle their renewal returned. */
  const call = (
    bundle: string,
    id: Identity | undefined,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<HttpReply> =>
    httpsJson(gw.agentUrl, method, path, body, {
      ca: bundle,
      ...(id ? { key: id.keyPem, cert: id.certificatePem } : {}),
    })
  const enroll = async (nodeId: string): Promise<Identity> => {
    await gw.declareNode(nodeId)
    const id = await gw.enroll(nodeId, await gw.issueSecret(nodeId))
    return { nodeId, keyPem: id.keyPem, certificatePem: id.certificatePem }
  }
  const renew = async (bundle: string, id: Identity): Promise<{ id: Identity; bundle: string }> => {
    const key = await nodeKey()
    const reply = await call(bundle, id, 'POST', '/v1/agent/certificate/renew', {
      csr_pem: await makeCsr(key, { name: `CN=${id.nodeId}` }),
    })
    assert.equal(reply.status, 200, JSON.stringify(reply.body))
    const fresh = { nodeId: id.nodeId, keyPem: key.privateKeyPem, certificatePem: reply.body.certificate_pem as string }
    // The first use of the new certificate (revokes the old one).
    assert.equal(
      (await call(reply.body.ca_bundle_pem as string, fresh, 'POST', '/v1/agent/heartbeat', { facts: null })).status,
      200,
    )
    return { id: fresh, bundle: reply.body.ca_bundle_pem as string }
  }
  const reloaded = async (caSha: string) => {
    await gw.gateway!.reloadPki()
    assert.equal(
      gw.gateway!.currentPkiSet().ca.fingerprintSha256,
      caSha,
      'the gateway serves the new set after its reload',
    )
  }

  // The gateway reloads its PKI only when a test says so (reloaded()): its 2 s timer could otherwise
  // reload between two steps on a loaded machine, and a test asserts what it holds until then.
  beforeEach(async () => {
    gw = await startTestGateway({ postgresUrl: pg.url, tuning: { pkiReloadMs: 3_600_000 } })
  })
  afterEach(async () => {
    await gw?.close()
  })

  it('runs a whole rotation: begin, renewals, abort refused, complete refused naming the node, dry run, complete; same gateway throughout', async () => {
    const oldSha = certificateFingerprintSha256(await readFile(join(gw.pkiDir, 'ca.pem'), 'utf8'))
    const a = await enroll('node-a')
    const b = await enroll('node-b')
    const bootstrap = gw.caPem
    assert.equal(
      (await call(bootstrap, a, 'POST', '/v1/agent/heartbeat', { facts: null })).body.renewal_due,
      undefined,
      'not due before a rotation',
    )

    const none = await rotate(gw, '--status')
    assert.equal(none.code, 0, none.stdout + none.stderr)
    assertMatchesOutputSchema('ca-rotate', none.json)
    assert.equal(none.json.result.rotation.state, 'none')

    const begun = await rotate(gw, '--begin')
    assert.equal(begun.code, 0, begun.stdout + begun.stderr)
    assertMatchesOutputSchema('ca-rotate', begun.json)
    const newSha = begun.json.result.rotation.newCaSha256 as string
    assert.equal(begun.json.result.rotation.oldCaSha256, oldSha)
    assert.equal(certificateFingerprintSha256(await readFile(join(gw.pkiDir, 'ca.pem'), 'utf8')), newSha)
    assert.equal(certificateFingerprintSha256(await readFile(join(gw.pkiDir, 'ca.pem.previous'), 'utf8')), oldSha)
    assert.equal((await stat(join(gw.pkiDir, 'ca.key.previous'))).mode & 0o777, 0o600)
    assert.deepEqual(bundleFingerprints(await readFile(join(gw.pkiDir, 'ca-bundle.pem'), 'utf8')), [newSha, oldSha])
    const [event] = await listEvents(gw.db.pool, { kind: 'ca_rotation_begun' })
    assert.deepEqual(event!.data, { old_ca_sha256: oldSha, new_ca_sha256: newSha })
    assert.equal((await rotate(gw, '--begin')).json.code, 'CA_ROTATION_IN_PROGRESS')

    await reloaded(newSha)
    // Old-CA certificates keep working, and the gateway tells their agents to renew.
    const beat = await call(bootstrap, a, 'POST', '/v1/agent/heartbeat', { facts: null })
    assert.equal(beat.status, 200)
    assert.equal(beat.body.renewal_due, true)

    const status = await rotate(gw, '--status')
    assert.equal(status.json.result.progress.renewed, 0)
    assert.equal(status.json.result.abortPossible, true)

    const renewedA = await renew(bootstrap, a)
    assert.equal((await listNodeCertificates(gw.db.pool, 'node-a')).at(-1)!.issuerCaSha256, newSha)
    assert.deepEqual(bundleFingerprints(renewedA.bundle), [newSha, oldSha], 'the renewal hands over the two-CA bundle')
    assert.equal(
      (await call(renewedA.bundle, renewedA.id, 'POST', '/v1/agent/heartbeat', { facts: null })).body.renewal_due,
      undefined,
    )

    const abort = await rotate(gw, '--abort')
    assert.equal(abort.json.code, 'CA_ROTATION_ABORT_REFUSED')
    assertMatchesOutputSchema('ca-rotate', abort.json)

    const filesBefore = await snapshot(gw.pkiDir)
    const preview = await rotate(gw, '--complete', '--dry-run')
    assert.equal(preview.code, 0, preview.stdout + preview.stderr)
    assertMatchesOutputSchema('ca-rotate', preview.json)
    assert.equal(preview.json.result.completePossible, false)
    assert.equal(preview.json.result.abortPossible, false)
    assert.deepEqual(
      preview.json.result.progress.blocking.map((n: { nodeId: string }) => n.nodeId),
      ['node-b'],
    )
    assert.deepEqual(await snapshot(gw.pkiDir), filesBefore, 'a dry run writes no file')

    const refused = await rotate(gw, '--complete')
    assert.equal(refused.json.code, 'CA_ROTATION_INCOMPLETE')
    assertMatchesOutputSchema('ca-rotate', refused.json)
    assert.match(refused.json.message, /node-b/)
    assert.deepEqual(
      refused.json.data.nodes.map((n: { nodeId: string }) => n.nodeId),
      ['node-b'],
    )
    assert.deepEqual(await snapshot(gw.pkiDir), filesBefore)
    assert.equal(
      (await call(bootstrap, b, 'POST', '/v1/agent/heartbeat', { facts: null })).status,
      200,
      'node-b still works',
    )

    const renewedB = await renew(bootstrap, b)
    const done = await rotate(gw, '--complete')
    assert.equal(done.code, 0, done.stdout + done.stderr)
    assertMatchesOutputSchema('ca-rotate', done.json)
    assert.equal(done.json.result.rotation.state, 'completed')
    const [completed] = await listEvents(gw.db.pool, { kind: 'ca_rotation_completed' })
    assert.equal(completed!.data.old_ca_sha256, oldSha)
    assert.equal(completed!.data.new_ca_sha256, newSha)
    assert.deepEqual(bundleFingerprints(await readFile(join(gw.pkiDir, 'ca-bundle.pem'), 'utf8')), [newSha])
    await assert.rejects(stat(join(gw.pkiDir, 'ca.key.previous')), { code: 'ENOENT' })
    const serverPem = await readFile(join(gw.pkiDir, 'server.pem'), 'utf8')
    assert.ok(
      new X509Certificate(serverPem).checkIssued(
        new X509Certificate(await readFile(join(gw.pkiDir, 'ca.pem'), 'utf8')),
      ),
    )

    await eventually('the gateway to serve the re-signed server certificate', async () => {
      await gw.gateway!.reloadPki()
      return (await servedCertificate(gw)).fingerprint256 === new X509Certificate(serverPem).fingerprint256
    })
    const onlyNew = await readFile(join(gw.pkiDir, 'ca-bundle.pem'), 'utf8')
    assert.equal((await call(onlyNew, renewedA.id, 'POST', '/v1/agent/heartbeat', { facts: null })).status, 200)
    assert.equal((await call(onlyNew, renewedB.id, 'POST', '/v1/agent/lease', { facts: null })).status, 200)
    // An old-CA client certificate no longer passes the handshake.
    await assert.rejects(call(renewedA.bundle, a, 'POST', '/v1/agent/heartbeat', { facts: null }))
    assert.equal((await rotate(gw, '--complete')).json.code, 'CA_ROTATION_NOT_STARTED')
  })

  it('a renewal whose answer was lost moves nobody: status shows the node blocking, --complete refuses, --abort works; --complete --force --yes cuts it off', async () => {
    const a = await enroll('node-a')
    /** A renewal the agent never sees the answer of: a new-CA certificate is issued, and never used. */
    const lostRenewal = async () => {
      const key = await nodeKey()
      const reply = await call(gw.caPem, a, 'POST', '/v1/agent/certificate/renew', {
        csr_pem: await makeCsr(key, { name: 'CN=node-a' }),
      })
      assert.equal(reply.status, 200, JSON.stringify(reply.body))
    }
    const begun = await rotate(gw, '--begin')
    assert.equal(begun.code, 0, begun.stdout + begun.stderr)
    const newSha = begun.json.result.rotation.newCaSha256 as string
    await reloaded(newSha)
    await lostRenewal()
    assert.ok((await listNodeCertificates(gw.db.pool, 'node-a')).some((c) => c.issuerCaSha256 === newSha))

    const status = await rotate(gw, '--status')
    assert.equal(status.code, 0, status.stdout + status.stderr)
    assertMatchesOutputSchema('ca-rotate', status.json)
    assert.equal(status.json.result.progress.renewed, 0, 'an issued certificate nobody used is not a move')
    assert.deepEqual(status.json.result.progress.blocking, [
      {
        nodeId: 'node-a',
        status: 'active',
        notAfter: status.json.result.progress.blocking[0].notAfter,
        unusedNewCertificate: true,
      },
    ])
    assert.equal(status.json.result.completePossible, false)
    assert.equal(status.json.result.abortPossible, true)
    const preview = await rotate(gw, '--complete', '--dry-run')
    assert.equal(preview.json.result.completePossible, false)
    assert.equal(preview.json.result.abortPossible, true)

    const filesBefore = await snapshot(gw.pkiDir)
    const refused = await rotate(gw, '--complete')
    assert.equal(refused.json.code, 'CA_ROTATION_INCOMPLETE')
    assert.match(refused.json.message, /node-a/)
    assert.ok(refused.json.actions.includes('fleetkit ca rotate --complete --force (cuts the listed nodes off)'))
    // Forced, but nobody can be asked (--json without --yes): nothing changes.
    const unconfirmed = await rotate(gw, '--complete', '--force')
    assert.equal(unconfirmed.json.code, 'CONFIRMATION_REQUIRED', unconfirmed.stdout + unconfirmed.stderr)
    assert.match(unconfirmed.json.message, /node-a \(active\)/)
    assert.deepEqual(await snapshot(gw.pkiDir), filesBefore)
    assert.equal((await call(gw.caPem, a, 'POST', '/v1/agent/heartbeat', { facts: null })).status, 200)

    const aborted = await rotate(gw, '--abort')
    assert.equal(aborted.code, 0, aborted.stdout + aborted.stderr)
    assertMatchesOutputSchema('ca-rotate', aborted.json)
    assert.equal(aborted.json.result.revoked, 1, 'the unused new-CA certificate is revoked')
    const [abortEvent] = await listEvents(gw.db.pool, { kind: 'ca_rotation_aborted' })
    assert.equal(abortEvent!.data.revoked_unused, 1)
    await reloaded(certificateFingerprintSha256(await readFile(join(gw.pkiDir, 'ca.pem'), 'utf8')))
    assert.equal(
      (await call(gw.caPem, a, 'POST', '/v1/agent/heartbeat', { facts: null })).status,
      200,
      "the agent's old certificate keeps working after the abort",
    )

    // Again, and this time the operator forces completion: the node is cut off, and the event says so.
    const again = await rotate(gw, '--begin')
    assert.equal(again.code, 0, again.stdout + again.stderr)
    await reloaded(again.json.result.rotation.newCaSha256 as string)
    await lostRenewal()
    const forced = await rotate(gw, '--complete', '--force', '--yes')
    assert.equal(forced.code, 0, forced.stdout + forced.stderr)
    assertMatchesOutputSchema('ca-rotate', forced.json)
    assert.equal(forced.json.result.rotation.state, 'completed')
    const [completed] = await listEvents(gw.db.pool, { kind: 'ca_rotation_completed' })
    assert.equal(completed!.data.forced, true)
    assert.deepEqual(completed!.data.forced_cut_off, ['node-a'])
  })

  it('--abort right after --begin restores the old CA byte for byte; an agent never notices; a gateway still holding the aborted CA refuses to issue from it', async () => {
    const a = await enroll('node-a')
    const before = await snapshot(gw.pkiDir)
    const begun = await rotate(gw, '--begin')
    assert.equal(begun.code, 0, begun.stdout + begun.stderr)
    const newSha = begun.json.result.rotation.newCaSha256 as string
    await reloaded(newSha)
    assert.equal((await call(gw.caPem, a, 'POST', '/v1/agent/heartbeat', { facts: null })).status, 200)

    const aborted = await rotate(gw, '--abort')
    assert.equal(aborted.code, 0, aborted.stdout + aborted.stderr)
    assertMatchesOutputSchema('ca-rotate', aborted.json)
    assert.deepEqual(await snapshot(gw.pkiDir), before, 'the old files are back and the archive is gone')
    assert.equal((await listEvents(gw.db.pool, { kind: 'ca_rotation_aborted' })).length, 1)

    // The gateway has not reloaded yet: it holds the aborted CA and must not issue from it.
    assert.equal(gw.gateway!.currentPkiSet().ca.fingerprintSha256, newSha)
    const key = await nodeKey()
    const refused = await call(gw.caPem, a, 'POST', '/v1/agent/certificate/renew', {
      csr_pem: await makeCsr(key, { name: 'CN=node-a' }),
    })
    assert.equal(refused.status, 503)
    assert.equal((refused.body.error as { code: string }).code, 'issuing_ca_retired')
    assert.ok(refused.headers['retry-after'])
    assert.equal((await listNodeCertificates(gw.db.pool, 'node-a')).length, 1)

    await reloaded(certificateFingerprintSha256(await readFile(join(gw.pkiDir, 'ca.pem'), 'utf8')))
    assert.equal((await call(gw.caPem, a, 'POST', '/v1/agent/heartbeat', { facts: null })).body.renewal_due, undefined)
    assert.equal((await rotate(gw, '--abort')).json.code, 'CA_ROTATION_NOT_STARTED')
  })

  it('a phase waits for an issuance in flight (the shared lock) before it changes anything', async () => {
    const holder = await gw.db.pool.connect()
    try {
      await holder.query('BEGIN')
      await holder.query('SELECT pg_advisory_xact_lock_shared($1)', [ISSUANCE_LOCK_KEY])
      const before = await snapshot(gw.pkiDir)
      const pending = rotate(gw, '--begin')
      await eventually(
        'ca rotate --begin to wait for the issuance lock',
        async () => {
          const { rows } = await gw.db.pool.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)
          return rows.length > 0
        },
        { timeoutMs: 60_000 },
      )
      assert.deepEqual(await snapshot(gw.pkiDir), before, 'nothing written while an issuance holds the lock')
      await holder.query('COMMIT')
      const begun = await pending
      assert.equal(begun.code, 0, begun.stdout + begun.stderr)
    } finally {
      holder.release()
    }
  })

  it('--status --wait reports progress until every connected node renewed, then ends with completion possible', async () => {
    const a = await enroll('node-a')
    const begun = await rotate(gw, '--begin')
    await reloaded(begun.json.result.rotation.newCaSha256 as string)
    const waiting = startProcess(
      process.execPath,
      [fleetkitEntry(), 'ca', 'rotate', '--status', '--wait', '--interval', '1'],
      {
        env: overlayEnv({ DATABASE_URL: gw.db.url, FLEETKIT_PKI_DIR: gw.pkiDir }),
      },
    )
    await eventually(
      'a progress line',
      () => waiting.stderr().includes('0/1 connected nodes renewed onto the new CA; waiting for node-a'),
      {
        timeoutMs: 60_000,
        stop: () => (waiting.exit() ? `it exited: ${waiting.stderr()}` : undefined),
      },
    )
    await renew(gw.caPem, a)
    const ended = await waiting.exited
    const done = { code: ended.code, stdout: waiting.stdout(), stderr: waiting.stderr() }
    assert.equal(done.code, 0, done.stdout + done.stderr)
    assert.match(done.stdout, /renewed onto the new CA: 1\/1 connected nodes/)
    assert.match(done.stdout, /complete possible: yes/)
  })

  it('running --complete again finishes a completion whose files were not written', async () => {
    const a = await enroll('node-a')
    const begun = await rotate(gw, '--begin')
    const newSha = begun.json.result.rotation.newCaSha256 as string
    await reloaded(newSha)
    await renew(gw.caPem, a)
    // The state part of a completion committed; the process died before the files.
    await gw.db.pool.query(`UPDATE ca_rotations SET status = 'completed', finished_at = now() WHERE status = 'begun'`)
    const resumed = await rotate(gw, '--complete')
    assert.equal(resumed.code, 0, resumed.stdout + resumed.stderr)
    assert.equal(resumed.json.result.resumed, true)
    assert.deepEqual(bundleFingerprints(await readFile(join(gw.pkiDir, 'ca-bundle.pem'), 'utf8')), [newSha])
    await assert.rejects(stat(join(gw.pkiDir, 'ca.key.previous')), { code: 'ENOENT' })
    assert.equal((await rotate(gw, '--complete')).json.code, 'CA_ROTATION_NOT_STARTED', 'nothing left to finish')
  })

  it('a killed earlier run: its temp files are removed, and a key without its certificate gets one advice from every command', async () => {
    const stale = join(gw.pkiDir, '.ca.key.0123456789ab.tmp')
    await writeFile(stale, 'half a key', { mode: 0o600 })
    const status = await rotate(gw, '--begin')
    assert.equal(status.code, 0, status.stdout + status.stderr)
    assert.deepEqual(status.json.result.removedTempFiles, ['.ca.key.0123456789ab.tmp'])
    await assert.rejects(stat(stale), { code: 'ENOENT' })

    const { mkdtemp, rm, copyFile } = await import('node:fs/promises')
    const { tmpdir } = await import('node:os')
    const half = await mkdtemp(join(tmpdir(), 'fleetkit-half-'))
    try {
      await copyFile(join(gw.pkiDir, 'ca.key'), join(half, 'ca.key'))
      const env = { DATABASE_URL: gw.db.url, FLEETKIT_PKI_DIR: half }
      for (const args of [
        ['ca', 'init'],
        ['ca', 'rotate', '--status'],
        ['ca', 'server-cert', '--server-name', 'gw.test'],
      ]) {
        const run = await runFleetkit([...args, '--json'], { env })
        assert.equal(run.json.code, 'PKI_KEY_WITHOUT_CERTIFICATE', `${args.join(' ')}: ${run.stdout}${run.stderr}`)
        assert.deepEqual(run.json.actions.slice(0, 2), [
          `if this CA ever issued certificates, restore ca.pem from backup into ${half}`,
          `if it never did (the interrupted ca init): mv ${half} ${half}.incomplete && fleetkit ca init`,
        ])
      }
      const { loadPkiSet } = await import('../../../src/pki/pki-set.js')
      await assert.rejects(
        loadPkiSet(half, new Date()),
        (error: { code?: string }) => error.code === 'PKI_KEY_WITHOUT_CERTIFICATE',
      )
    } finally {
      await rm(half, { recursive: true, force: true })
    }
  })
})
