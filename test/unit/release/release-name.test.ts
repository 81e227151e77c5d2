import assert from 'node:assert/strict'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import {
  archiveName,
  assertReleaseArchitecture,
  assertReleaseVersion,
  isReleaseVersion,
  releaseArchitectureOf,
} from '../../../src/release/release-name.js'

describe('release names', () => {
  it('accepts MAJOR.MINOR.PATCH with an optional prerelease', () => {
    for (const version of ['0.0.1', '1.2.3', '10.20.30', '1.0.0-rc.1', '2.0.0-beta-2', '1.0.0-0a.b-c'])
      assert.ok(isReleaseVersion(version), version)
  })

  it('refuses shell metacharacters, build metadata, spaces, paths and overlong versions', () => {
    for (const version of [
      '',
      '1.2',
      '1.2.3.4',
      'v1.2.3',
      '1.2.3+build',
      '1.2.3 ',
      '1.2.3;id',
      '1.2.3$(id)',
      '`id`',
      '1.2.3\n',
      '1.2.3/../x',
      '1.2.3-',
      '1.2.3-.a',
      `1.2.3-${'a'.repeat(60)}`,
    ]) {
      assert.ok(!isReleaseVersion(version), JSON.stringify(version))
    }
    assert.throws(
      () => assertReleaseVersion('1.2.3;id'),
      (e: unknown) => e instanceof FleetkitError && e.code === 'RELEASE_INPUT_INVALID',
    )
  })

  it('names the archive with version and architecture', () => {
    assert.equal(archiveName('1.4.0', 'amd64'), 'fleetkit-agent-1.4.0-linux-amd64.tar.zst')
    assert.equal(archiveName('1.4.0-rc.1', 'arm64'), 'fleetkit-agent-1.4.0-rc.1-linux-arm64.tar.zst')
  })

  it('knows two architectures and maps Node.js names to them', () => {
    assert.equal(assertReleaseArchitecture('arm64'), 'arm64')
    assert.throws(
      () => assertReleaseArchitecture('x86_64'),
      (e: unknown) => e instanceof FleetkitError && e.code === 'RELEASE_INPUT_INVALID',
    )
    assert.equal(releaseArchitectureOf('x64'), 'amd64')
    assert.equal(releaseArchitectureOf('arm64'), 'arm64')
    assert.equal(releaseArchitectureOf('ia32'), undefined)
  })
})
