// The enrollment listener's release routes: GET and HEAD /<version>/<file> from <state dir>/releases,
// in exactly the layout hosts read under release.url; anything else (another method, a traversal, an
// escape, a file not of a release) refused before the disk is touched, an absent release a coded 404.
// Served through the gateway's own request handler on a plain HTTP socket, with the database down.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { closeSync, constants, openSync } from 'node:fs'
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { createServer, request, type Server } from 'node:http'
import { type AddressInfo, createServer as createNetServer, type Server as NetServer } from 'node:net'
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
  let socketServer: NetServer
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
    // A FIFO where a file should be (opening it for reading waits for a writer), and version directories that
    // are links: one leading outside releases/, one to a published version.
    await mkdir(join(releases, '3.0.0'))
    execFileSync('mkfifo', [join(releases, '3.0.0', 'SHA256SUMS.sig')])
    // A socket, which open() refuses with ENXIO.
    socketServer = createNetServer()
    await new Promise<void>((resolve) => socketServer.listen(join(releases, '3.0.0', 'SHA256SUMS'), resolve))
    await mkdir(join(dir, 'outside'))
    await writeFile(join(dir, 'outside', 'SHA256SUMS'), 'not a release')
    await symlink(join(dir, 'outside'), join(releases, '4.0.0'))
    await symlink(V, join(releases, '4.0.1'))
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
    // Should a read of the FIFO still wait (the bug this file guards against), a writer ends it, so that no
    // thread of this process is left blocked.
    for (let i = 0; i < 8; i++) {
      try {
        closeSync(openSync(join(releases, '3.0.0', 'SHA256SUMS.sig'), constants.O_WRONLY | constants.O_NONBLOCK))
      } catch {
        break // ENXIO: nobody reads it
      }
    }
    await new Promise((resolve) => server?.close(resolve))
    await new Promise((resolve) => socketServer?.close(resolve))
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

  it('a FIFO or a socket is 404 release_not_found at once, and many FIFO requests leave the files served', async () => {
    // More requests than libuv has threads (4): an open that waited for a writer would hold each for good.
    const fifo = await Promise.all(Array.from({ length: 6 }, () => send(port, 'GET', '/3.0.0/SHA256SUMS.sig')))
    for (const reply of fifo) {
      assert.equal(reply.status, 404)
      assert.equal(JSON.parse(reply.body.toString()).error.code, 'release_not_found')
    }
    assert.equal((await send(port, 'GET', `/${V}/SHA256SUMS`)).status, 200)
    const socket = await send(port, 'GET', '/3.0.0/SHA256SUMS')
    assert.equal(socket.status, 404, 'a socket')
    assert.equal(JSON.parse(socket.body.toString()).error.code, 'release_not_found')
  })

  it('a version directory that is a link is not followed: 404, inside releases/ or outside it', async () => {
    for (const path of ['/4.0.0/SHA256SUMS', '/4.0.1/SHA256SUMS', `/4.0.1/fleetkit-agent-4.0.1-linux-amd64.tar.zst`]) {
      const reply = await send(port, 'GET', path)
      assert.equal(reply.status, 404, path)
      assert.equal(JSON.parse(reply.body.toString()).error.code, 'release_not_found', path)
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
