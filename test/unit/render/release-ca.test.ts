// Which CA hosts verify release downloads with: release.caFile for a private mirror; the gateway CA
// bundle when release.url is an enrollment listener of the gateway (which serves published releases);
// else none. The agent seed and the inventory both take it from here.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

import { parse } from 'yaml'

import { releaseUrlOnGateway } from '../../../src/definition/gateway-urls.js'
import type { Definition } from '../../../src/definition/types.js'
import { AGENT_SEED_SCRIPT_PATH } from '../../../src/render/agent-seed.js'
import { renderInventory } from '../../../src/render/inventory.js'
import { readReleaseCa } from '../../../src/render/release-ca.js'
import { agentSeedDocument, nodeTarget } from '../../../src/render/seed-documents.js'
import { validDefinition } from '../../support/definition-fixture.js'
import { ephemeralCa } from '../../support/pki.js'

const execFileAsync = promisify(execFile)

function withRelease(release: Partial<Definition['release']>, replicas?: Definition['gateway']['replicas']) {
  const d = validDefinition()
  return {
    ...d,
    gateway: { ...d.gateway, ...(replicas ? { replicas } : {}) },
    release: { ...d.release, ...release },
  } as Definition
}

describe('release CA: the gateway serves releases on its enrollment listener', () => {
  let dir: string
  let gatewayPem: string
  let mirrorPem: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-release-ca-'))
    gatewayPem = (await ephemeralCa()).certificatePem
    mirrorPem = (await ephemeralCa()).certificatePem
    await writeFile(join(dir, 'mirror-ca.pem'), mirrorPem)
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('knows an enrollment listener by scheme, host and port, whatever the path or trailing slash', () => {
    const enroll = 'https://enroll.fleet.internal:8444'
    for (const url of [enroll, `${enroll}/`, 'https://ENROLL.fleet.internal:8444', `${enroll}/releases`])
      assert.equal(releaseUrlOnGateway(withRelease({ url })), true, url)
    for (const url of [
      'https://enroll.fleet.internal',
      'https://enroll.fleet.internal:8443',
      'https://gateway.fleet.internal:8443',
      'https://releases.fleet.internal/fleetkit-agent',
    ])
      assert.equal(releaseUrlOnGateway(withRelease({ url })), false, url)
    const replicas = [{ url: 'https://gw-2.fleet.internal:8443', enrollUrl: 'https://enroll-2.fleet.internal:8444' }]
    assert.equal(releaseUrlOnGateway(withRelease({ url: 'https://enroll-2.fleet.internal:8444' }, replicas)), true)
  })

  it('release.caFile wins; a release.url on the gateway gets the gateway CA bundle; any other none', async () => {
    let asked = 0
    const gatewayCa = async () => {
      asked += 1
      return gatewayPem
    }
    const onGateway = withRelease({ url: 'https://enroll.fleet.internal:8444' })
    assert.equal(await readReleaseCa(onGateway, dir, gatewayCa), gatewayPem)
    assert.equal(asked, 1)
    const mirror = { ...onGateway, release: { ...onGateway.release, caFile: 'mirror-ca.pem' } }
    assert.equal(await readReleaseCa(mirror, dir, gatewayCa), mirrorPem)
    const publicMirror = withRelease({ url: 'https://releases.fleet.internal/fleetkit-agent' })
    assert.equal(await readReleaseCa(publicMirror, dir, gatewayCa), undefined)
    assert.equal(asked, 1, 'the gateway bundle is read only for a release.url on the gateway')
  })

  it('release.caFile that is a device or a FIFO, or too large, is refused at once (/dev/zero filled the memory)', async () => {
    const onGateway = withRelease({ url: 'https://enroll.fleet.internal:8444' })
    await execFileAsync('mkfifo', [join(dir, 'fifo.pem')])
    await writeFile(join(dir, 'huge.pem'), Buffer.alloc(1024 * 1024 + 1, 0x41))
    for (const caFile of ['/dev/zero', 'fifo.pem', 'huge.pem', 'missing.pem']) {
      const mirror = { ...onGateway, release: { ...onGateway.release, caFile } }
      await assert.rejects(
        readReleaseCa(mirror, dir, async () => gatewayPem),
        { code: 'SEED_VALUE_INVALID' },
        caFile,
      )
    }
  })

  it('the agent seed passes the gateway CA to the verifier, and the inventory hands it to agent_update', async () => {
    const definition = withRelease({ url: 'https://enroll.fleet.internal:8444' })
    const releaseCa = await readReleaseCa(definition, dir, async () => gatewayPem)
    const seed = agentSeedDocument(
      definition,
      { ...nodeTarget(definition, 'build-1', undefined), sshUser: undefined },
      gatewayPem,
      'a'.repeat(64),
      releaseCa,
    )
    const files = (parse(seed.replace(/^#cloud-config\n/, '')) as { write_files: { path: string; content: string }[] })
      .write_files
    const script = files.find((f) => f.path === AGENT_SEED_SCRIPT_PATH)!.content
    const releaseCaBlock = /FLEETKIT_RELEASE_CA'\n([\s\S]*?)\nFLEETKIT_RELEASE_CA/.exec(script)?.[1] ?? ''
    assert.equal(releaseCaBlock.trim(), gatewayPem.trim())
    assert.match(script, /FLEETKIT_RELEASE_URL=https:\/\/enroll\.fleet\.internal:8444/)
    const inventory = renderInventory({
      definition,
      stateNodes: [],
      hostPolicy: {},
      knownHostsPath: '/tmp/known_hosts',
      releaseCaPem: releaseCa,
    })
    assert.match(inventory.yaml, /caPem: /)
    assert.ok(inventory.yaml.includes(gatewayPem.trim().split('\n')[1]!))
  })
})
