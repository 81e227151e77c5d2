// The local cloud's rules that need no machine: what it refuses before starting (not root, a missing
// program named with its package), user_data as the NoCloud seed gets it, the bridge's addresses, where the
// image cache lives, the mirror it builds from and the image's cache key.
import assert from 'node:assert/strict'
import { gzipSync } from 'node:zlib'

import { isFleetkitError } from '../../../../src/checks/fleetkit-error.js'
import { CloudBridge } from '../../../../src/provider/local-cloud/bridge.js'
import { assertLocalCloudHost } from '../../../../src/provider/local-cloud/host-tools.js'
import { DEFAULT_IMAGE_CACHE, imageCacheDir } from '../../../../src/provider/local-cloud/image-cache.js'
import { debianMirror, imageKey } from '../../../../src/provider/local-cloud/image-recipe.js'
import { seedUserData } from '../../../../src/provider/local-cloud/user-data.js'

describe('provider: the local cloud’s parts', () => {
  it('refuses to start without root, and names the package of each missing program', () => {
    const everything = { has: () => true }
    assert.throws(
      () => assertLocalCloudHost({ uid: 1000, ...everything }),
      (error) => isFleetkitError(error) && error.code === 'PROVIDER_STUB_NEEDS_ROOT',
    )
    assert.doesNotThrow(() => assertLocalCloudHost({ uid: 0, ...everything }))
    assert.throws(
      () => assertLocalCloudHost({ uid: 0, has: (p) => p !== 'systemd-nspawn' && p !== 'debootstrap' }),
      (error) =>
        isFleetkitError(error) &&
        error.code === 'PROVIDER_STUB_TOOL_MISSING' &&
        /install debootstrap systemd-container/.test(error.message),
    )
  })

  it('hands user_data to cloud-init decoded: gzip+base64, base64, or plain', () => {
    const config = '#cloud-config\nruncmd: [true]\n'
    assert.equal(seedUserData(gzipSync(config).toString('base64')).toString(), config)
    assert.equal(seedUserData(Buffer.from(config).toString('base64')).toString(), config)
    assert.equal(seedUserData(config).toString(), config)
    assert.equal(seedUserData('#!/bin/sh\necho hi\n').toString(), '#!/bin/sh\necho hi\n')
    assert.equal(seedUserData(undefined).toString(), '#cloud-config\n{}\n')
  })

  it('gives each server the next free address after the bridge’s own, and takes it back', () => {
    const bridge = new CloudBridge({ name: 'fktest0', address: '10.233.0.1', prefixLength: 24 })
    assert.equal(bridge.allocate(), '10.233.0.2')
    assert.equal(bridge.allocate(), '10.233.0.3')
    bridge.release('10.233.0.2')
    assert.equal(bridge.allocate(), '10.233.0.2')
    for (let i = 4; i <= 254; i++) bridge.allocate()
    assert.throws(() => bridge.allocate(), /no free address/)
  })

  it('keeps images in FLEETKIT_LOCAL_CLOUD_CACHE, else /var/cache/fleetkit/local-cloud', () => {
    assert.equal(imageCacheDir({}), DEFAULT_IMAGE_CACHE)
    assert.equal(imageCacheDir({ FLEETKIT_LOCAL_CLOUD_CACHE: '/srv/images' }), '/srv/images')
  })

  it('builds from the Debian mirror apt names, and keys an image by its suite and mirror', () => {
    const deb822 =
      'Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n'
    assert.equal(debianMirror(deb822), 'http://mirror.example/debian')
    assert.equal(debianMirror('deb [arch=amd64] http://m.example/debian trixie main\n'), 'http://m.example/debian')
    assert.equal(debianMirror(''), 'http://deb.debian.org/debian')
    assert.notEqual(imageKey('bookworm', 'http://a'), imageKey('trixie', 'http://a'))
    assert.notEqual(imageKey('bookworm', 'http://a'), imageKey('bookworm', 'http://b'))
    assert.equal(imageKey('bookworm', 'http://a'), imageKey('bookworm', 'http://a'))
  })
})
