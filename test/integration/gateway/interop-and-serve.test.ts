import assert from 'node:assert/strict'
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { initPki } from '../../../src/pki/init-pki.js'
import { getNode } from '../../../src/store/nodes/nodes.js'
import { type CliRun, runFleetkit } from '../../support/cli.js'
import { startTestGateway, type TestGateway } from '../../support/gateway.js'
import { freshDatabase, startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'
import { runProcess, runProcessOk } from '../../support/process.js'

function serveFails(env: Record<string, string>): Promise<CliRun> {
  return runFleetkit(['gateway', 'serve'], { env, timeout: 60_000 })
}

describe('gateway: a real process, peers nobody here wrote (openssl, curl)', function () {
  this.timeout(180_000)
  let pg: DisposablePostgres
  let gw: TestGateway
  let dir: string
  before(async () => {
    pg = await startDisposablePostgres()
    gw = await startTestGateway({ postgresUrl: pg.url, mode: 'process' })
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-interop-'))
  })
  after(async () => {
    await gw?.close()
    await pg?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('a node enrolled with only openssl req and curl heartbeats with curl --cert; its certificate passes openssl verify -purpose sslclient', async () => {
    await gw.declareNode('node-i')
    const secret = await gw.issueSecret('node-i')
    const f = (name: string) => join(dir, name)
    await writeFile(f('ca.pem'), gw.caPem)
    await runProcessOk('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', f('key.pem')])
    await runProcessOk('openssl', ['req', '-new', '-key', f('key.pem'), '-subj', '/CN=node-i', '-out', f('csr.pem')])
    await writeFile(
      f('enroll.json'),
      JSON.stringify({ node_id: 'node-i', enrollment_secret: secret, csr_pem: await readFile(f('csr.pem'), 'utf8') }),
    )
    const enrolled = await runProcessOk('curl', [
      '--silent',
      '--show-error',
      '--fail-with-body',
      '--cacert',
      f('ca.pem'),
      '-H',
      'content-type: application/json',
      '--data-binary',
      `@${f('enroll.json')}`,
      `${gw.enrollUrl}/v1/enroll`,
    ])
    const reply = JSON.parse(enrolled.stdout) as {
      certificate_pem: string
      ca_pem: string
      not_after: string
      server_time: string
    }
    assert.ok(reply.not_after && reply.server_time)
    await writeFile(f('cert.pem'), reply.certificate_pem)

    const verified = await runProcessOk('openssl', [
      'verify',
      '-purpose',
      'sslclient',
      '-CAfile',
      f('ca.pem'),
      f('cert.pem'),
    ])
    assert.match(verified.stdout, /cert\.pem: OK/)
    const serverPurpose =
      (await runProcess('openssl', ['verify', '-purpose', 'sslserver', '-CAfile', f('ca.pem'), f('cert.pem')])).code ===
      0
        ? 'accepted'
        : 'refused'
    assert.equal(serverPurpose, 'refused', 'EKU is clientAuth only')
    const text = (await runProcessOk('openssl', ['x509', '-noout', '-text', '-in', f('cert.pem')])).stdout
    assert.match(text, /Subject: CN = node-i/)
    assert.match(text, /DNS:node-i/)
    assert.match(text, /X509v3 Key Usage: critical\s+Digital Signature\n/)
    assert.match(text, /X509v3 Extended Key Usage: \s+TLS Web Client Authentication\n/)
    assert.match(text, /CA:FALSE/)
    assert.match(text, /ASN1 OID: prime256v1/)

    const heartbeat = await runProcessOk('curl', [
      '--silent',
      '--show-error',
      '--fail-with-body',
      '--cert',
      f('cert.pem'),
      '--key',
      f('key.pem'),
      '--cacert',
      f('ca.pem'),
      '-H',
      'content-type: application/json',
      '--data',
      JSON.stringify({ facts: { cpu_count: 2, kernel: 'curl' } }),
      `${gw.agentUrl}/v1/agent/heartbeat`,
    ])
    assert.equal(JSON.parse(heartbeat.stdout).node_status, 'active')
    const identity = await runProcessOk('curl', [
      '--silent',
      '--fail-with-body',
      '--cert',
      f('cert.pem'),
      '--key',
      f('key.pem'),
      '--cacert',
      f('ca.pem'),
      `${gw.agentUrl}/v1/agent/identity`,
    ])
    assert.equal(JSON.parse(identity.stdout).node_id, 'node-i')
    const noCert = (await runProcess('curl', ['--silent', '--cacert', f('ca.pem'), `${gw.agentUrl}/v1/agent/identity`]))
      .code
    assert.notEqual(noCert, 0, 'curl without a client certificate is refused by the agent listener')
  })

  it('writes pending heartbeats when stopped with SIGTERM, and logs one JSON line per request without secrets', async () => {
    await gw.declareNode('node-t')
    const secret = await gw.issueSecret('node-t')
    const id = await gw.enroll('node-t', secret)
    assert.equal(
      (await gw.agent(id, 'POST', '/v1/agent/heartbeat', { facts: { cpu_count: 7, kernel: 'sigterm-test' } })).status,
      200,
    )
    const child = gw.child!
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    child.kill('SIGTERM')
    assert.equal(await exited, 0)
    const node = await getNode(gw.db.pool, 'node-t')
    assert.equal(node!.hostCpuCount, 7, 'the pending heartbeat was written at shutdown')
    assert.equal(node!.hostKernel, 'sigterm-test')
    const logs = gw.logs.map((line) => JSON.parse(line) as Record<string, unknown>)
    assert.ok(logs.some((l) => l.msg === 'stopped'))
    const requests = logs.filter((l) => l.msg === 'request')
    assert.ok(requests.length >= 3)
    for (const l of requests) assert.ok(typeof l.route === 'string' && typeof l.status === 'number')
    // Each names its peer, also a request whose connection ended before its line was written.
    assert.deepEqual([...new Set(requests.map((l) => l.remote))], ['127.0.0.1'])
    assert.doesNotMatch(gw.logs.join('\n'), new RegExp(secret))
    assert.doesNotMatch(gw.logs.join('\n'), /PRIVATE KEY|postgres:\/\/postgres:[^*]/)
  })
})

describe('fleetkit gateway serve refuses to start', function () {
  this.timeout(180_000)
  let pg: DisposablePostgres
  let dir: string
  before(async () => {
    pg = await startDisposablePostgres()
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-serve-'))
    await initPki({ pkiDir: join(dir, 'pki'), now: new Date() })
  })
  after(async () => {
    await pg?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('with a group-readable CA key (CA_KEY_PERMISSIONS)', async () => {
    await chmod(join(dir, 'pki', 'ca.key'), 0o640)
    try {
      const r = await serveFails({ FLEETKIT_PKI_DIR: join(dir, 'pki'), FLEETKIT_STATE_DIR: join(dir, 'state') })
      assert.equal(r.code, 1)
      assert.match(r.stderr, /Error \(CA_KEY_PERMISSIONS\)/)
    } finally {
      await chmod(join(dir, 'pki', 'ca.key'), 0o600)
    }
  })

  it('with an invalid variable (GATEWAY_CONFIG_INVALID, exit 2) and without a CA (CA_MISSING)', async () => {
    const bad = await serveFails({ FLEETKIT_PKI_DIR: join(dir, 'pki'), FLEETKIT_AGENT_BIND: 'nowhere:1' })
    assert.equal(bad.code, 2)
    assert.match(bad.stderr, /Error \(GATEWAY_CONFIG_INVALID\): FLEETKIT_AGENT_BIND/)
    const missing = await serveFails({ FLEETKIT_PKI_DIR: join(dir, 'empty') })
    assert.match(missing.stderr, /Error \(CA_MISSING\)/)
  })

  it('on an address in use (GATEWAY_BIND_FAILED)', async () => {
    const db = await freshDatabase(pg.url)
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    const port = (blocker.address() as { port: number }).port
    try {
      const r = await serveFails({
        DATABASE_URL: db.url,
        FLEETKIT_PKI_DIR: join(dir, 'pki'),
        FLEETKIT_STATE_DIR: join(dir, 'state'),
        FLEETKIT_ENROLL_BIND: '127.0.0.1:0',
        FLEETKIT_AGENT_BIND: `127.0.0.1:${port}`,
        FLEETKIT_METRICS_BIND: '127.0.0.1:0',
      })
      assert.equal(r.code, 1)
      assert.match(r.stderr, /Error \(GATEWAY_BIND_FAILED\).*FLEETKIT_AGENT_BIND/)
    } finally {
      blocker.close()
      await db.drop()
    }
  })
})
