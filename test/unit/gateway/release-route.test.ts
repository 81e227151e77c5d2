// The enrollment listener's release routes: GET and HEAD /<version>/<file> from <state dir>/releases,
// in exactly the layout hosts read under release.url; anything else (another method, a traversal, an
// escape, a file not of a release) refused before the disk is touched, an absent release a coded 404.
// Served through the gateway's own request handler on a plain HTTP socket, with the database down.
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { systemClock } from '../../../src/config/clock.js'
import { DEFAULT_LOAD_SHEDDER_TUNING, LoadShedder } from '../../../src/gateway/load/load-shedder.js'
import { GatewayMetrics } from '../../../src/gateway/metrics/metrics.js'
import { enrollRoutes } from '../../../src/gateway/routes/enroll-route.js'
import type { GatewayContext } from '../../../src/gateway/routes/gateway-context.js'
import { errorReply } from '../../../src/gateway/routes/http.js'
import { openPublishedFile, releaseRoutes } from '../../../src/gateway/routes/release-routes.js'
import { requestHandler } from '../../../src/gateway/routes/request-handler.js'
import { Router } from '../../../src/gateway/routes/router.js'
import { silentLogger } from '../../../src/log/logger.js'

const V = '1.4.0'
const ARCHIVE = `fleetkit-agent-${V}-linux-amd64.tar.zst`

interface Reply {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer
}

/** One request with the path sent exactly as given (no normalisation by the client). */
function send(port: number, method: string, path: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

describe('gateway: release routes', function () {
  this.timeout(20_000)
  let dir: string
  let releases: string
  let server: Server
  let port: number
  const sums = Buffer.from(`${'a'.repeat(64)}  ${ARCHIVE}\n`)
  const archive = Buffer.alloc(3 * 1024 * 1024 + 17, 7)

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-release-route-'))
    releases = join(dir, 'state', 'releases')
    await mkdir(join(releases, V), { recursive: true })
    await writeFile(join(releases, V, 'SHA256SUMS'), sums)
    await writeFile(join(releases, V, 'SHA256SUMS.sig'), 'c2ln\n')
    await writeFile(join(releases, V, ARCHIVE), archive)
    // What a publish that crashed leaves, and a link: neither is ever served.
    await mkdir(join(releases, `.${V}.0123456789ab.tmp`))
    await writeFile(join(releases, `.${V}.0123456789ab.tmp`, 'SHA256SUMS'), 'half')
    await writeFile(join(dir, 'secret'), 'not a release')
    await mkdir(join(releases, '2.0.0'))
    await symlink(join(dir, 'secret'), join(releases, '2.0.0', 'SHA256SUMS'))
    // The database is down: release files do not need it.
    const g = {
      clock: systemClock,
      logger: silentLogger,
      metrics: new GatewayMetrics(),
      shedder: new LoadShedder({ tuning: DEFAULT_LOAD_SHEDDER_TUNING, delayMs: () => 0 }),
      database: { available: false },
    } as unknown as GatewayContext
    const router = new Router([...enrollRoutes(g), ...releaseRoutes(releases)])
    server = createServer(requestHandler('enroll', router, g))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })
  after(async () => {
    await new Promise((resolve) => server?.close(resolve))
    await rm(dir, { recursive: true, force: true })
  })

  it('GET serves each file of <version>/ whole, with its content-length, while the database is down', async () => {
    for (const [name, bytes, type] of [
      ['SHA256SUMS', sums, 'text/plain; charset=utf-8'],
      ['SHA256SUMS.sig', Buffer.from('c2ln\n'), 'text/plain; charset=utf-8'],
      [ARCHIVE, archive, 'application/zstd'],
    ] as const) {
      const reply = await send(port, 'GET', `/${V}/${name}`)
      assert.equal(reply.status, 200, name)
      assert.equal(reply.headers['content-length'], String(bytes.length), name)
      assert.equal(reply.headers['content-type'], type)
      assert.equal(reply.headers['x-content-type-options'], 'nosniff')
      assert.ok(reply.body.equals(bytes), name)
    }
  })

  it('HEAD answers the same headers without a body', async () => {
    const reply = await send(port, 'HEAD', `/${V}/${ARCHIVE}`)
    assert.equal(reply.status, 200)
    assert.equal(reply.headers['content-length'], String(archive.length))
    assert.equal(reply.body.length, 0)
  })

  it('only GET and HEAD: another method is 405 with Allow', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS']) {
      const reply = await send(port, method, `/${V}/SHA256SUMS`)
      assert.equal(reply.status, 405, method)
      assert.equal(reply.headers.allow, 'GET, HEAD')
    }
    // The enrollment route keeps its own: GET /v1/enroll is still 405, not a release path.
    assert.equal((await send(port, 'GET', '/v1/enroll')).status, 405)
  })

  it('a version not published, or no releases directory, is 404 release_not_found', async () => {
    const reply = await send(port, 'GET', `/9.9.9/SHA256SUMS`)
    assert.equal(reply.status, 404)
    assert.equal(JSON.parse(reply.body.toString()).error.code, 'release_not_found')
    assert.equal((await send(port, 'HEAD', `/9.9.9/SHA256SUMS`)).status, 404)
    // A link at the file is not followed; an archive named for another version is not this one's.
    assert.equal((await send(port, 'GET', '/2.0.0/SHA256SUMS')).status, 404)
    assert.equal((await send(port, 'GET', `/2.0.0/${ARCHIVE}`)).status, 404)
    for (const releasesDir of [join(dir, 'no-such-state', 'releases'), undefined]) {
      const error = await openPublishedFile(releasesDir, V, 'SHA256SUMS').then(
        () => undefined,
        (e: unknown) => e,
      )
      assert.ok(error instanceof FleetkitError && error.code === 'RELEASE_NOT_FOUND', String(error))
      assert.equal(errorReply(error).status, 404)
    }
  })

  it('refuses traversal, escapes, listings and files that are not a release file with a 404, never a 5xx', async () => {
    const paths = [
      '/',
      `/${V}`,
      `/${V}/`,
      `/${V}/../../secret`,
      `/../${V}/SHA256SUMS`,
      `/${V}/..%2f..%2fsecret`,
      `/%2e%2e/${V}/SHA256SUMS`,
      `/${V}%2fSHA256SUMS`,
      `/${V}/SHA256SUMS%00`,
      `/${V}/SHA256SUMS/`,
      `/${V}/sub/SHA256SUMS`,
      `/${V}/fleetkit-agent-${V}-linux-riscv64.tar.zst`,
      `/${V}/notes.txt`,
      `/.${V}.0123456789ab.tmp/SHA256SUMS`,
      `/v1/SHA256SUMS`,
      `/${'1'.repeat(70)}.0.0/SHA256SUMS`,
      `//${V}/SHA256SUMS`,
    ]
    for (const path of paths) {
      const reply = await send(port, 'GET', path)
      assert.equal(reply.status, 404, `${path}: ${reply.status} ${reply.body.toString().slice(0, 200)}`)
      assert.match(JSON.parse(reply.body.toString()).error.code, /^(route_not_found|release_not_found)$/, path)
    }
  })

  it('the routes take exactly the layout a host reads: <version>/<SHA256SUMS|SHA256SUMS.sig|archive>', () => {
    const router = new Router(releaseRoutes(releases))
    for (const method of ['GET', 'HEAD']) {
      assert.deepEqual(router.match(method, `/${V}-rc.1/SHA256SUMS.sig`)?.params, {
        version: `${V}-rc.1`,
        file: 'SHA256SUMS.sig',
      })
      assert.deepEqual(router.match(method, `/${V}/fleetkit-agent-${V}-linux-arm64.tar.zst`)?.params, {
        version: V,
        file: `fleetkit-agent-${V}-linux-arm64.tar.zst`,
      })
    }
    assert.equal(router.match('GET', '/1.4/SHA256SUMS'), undefined)
    assert.equal(router.match('GET', '/v1.4.0/SHA256SUMS'), undefined)
  })
})
