import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { writeDemoFleet } from '../../../src/demo/fleet.js'

describe('demo fleet: examples/fleet.yaml with one node per pool on loopback', () => {
  let dir: string

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-demo-fleet-'))
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('declares the first node of each pool, active, without a host key or ssh.host, and loads as a valid definition', async () => {
    const fleet = await writeDemoFleet({
      dir,
      gateway: { url: 'https://127.0.0.1:40001', enrollUrl: 'https://127.0.0.1:40002' },
      release: {
        url: 'https://127.0.0.1:40003/fleetkit-agent',
        publicKey: Buffer.alloc(32, 7).toString('base64'),
        version: '0.1.0',
      },
      releaseCaPem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
    })
    assert.deepEqual(
      fleet.nodes.map((n) => [n.id, n.pool, n.state, n.hostKey]),
      [
        ['build-1', 'build', 'active', undefined],
        ['app-1', 'application', 'active', undefined],
        ['db-1', 'database', 'active', undefined],
      ],
    )
    // Each is the server the demo provisions: its address is that server's (a made-up ssh.host would
    // be NODE_ADDRESS_DISAGREES), its account stays.
    assert.deepEqual(
      fleet.nodes.map((n) => n.ssh),
      [{ user: 'fleetkit', port: 22 }, { user: 'fleetkit' }, { user: 'fleetkit' }],
    )
    assert.equal(fleet.definition.gateway.url, 'https://127.0.0.1:40001')
    assert.equal(fleet.definition.release.caFile, 'release-ca.pem')
    assert.equal(fleet.definition.canary, 'build-1')
    assert.equal(fleet.definition.example, true, 'still fictional: documentation addresses stay accepted')
    assert.match(await readFile(join(dir, 'release-ca.pem'), 'utf8'), /BEGIN CERTIFICATE/)
    assert.equal(fleet.path, join(dir, 'fleet.yaml'))
  })
})
