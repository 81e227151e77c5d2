import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { fakeAgent, releaseJson, run } from './release-cli.js'

describe('fleetkit release pack', function () {
  this.timeout(60_000)
  let dir: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-release-pack-'))
    await fakeAgent(join(dir, 'dist'), 'amd64', '2.0.0')
    await fakeAgent(join(dir, 'dist'), 'arm64', '2.0.0')
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('writes byte-identical archives and SHA256SUMS on every run; the JSON matches the schema', async () => {
    const one = await releaseJson('pack', [
      '--version',
      '2.0.0',
      '--input',
      join(dir, 'dist'),
      '--output',
      join(dir, 'one'),
    ])
    const two = await releaseJson('pack', [
      '--version',
      '2.0.0',
      '--input',
      join(dir, 'dist'),
      '--output',
      join(dir, 'two'),
    ])
    assert.equal(one.code, 0, one.stdout)
    assert.equal(two.code, 0, two.stdout)
    const names = (await readdir(join(dir, 'one'))).sort()
    assert.deepEqual(names, [
      'SHA256SUMS',
      'fleetkit-agent-2.0.0-linux-amd64.tar.zst',
      'fleetkit-agent-2.0.0-linux-arm64.tar.zst',
    ])
    for (const name of names)
      assert.ok((await readFile(join(dir, 'one', name))).equals(await readFile(join(dir, 'two', name))), name)
    const archives = (one.json.result as { archives: { name: string; sha256: string }[] }).archives
    assert.deepEqual(
      archives.map((a) => a.name),
      names.slice(1),
    )
  })

  it('holds one regular file fleetkit-agent, 0755, root:root, fixed mtime, as GNU tar and sha256sum read it', async () => {
    const out = join(dir, 'one')
    const listing = await run('bash', [
      '-c',
      'zstd -q -dc "$1" | tar -tv --numeric-owner --full-time -f -',
      '-',
      join(out, 'fleetkit-agent-2.0.0-linux-amd64.tar.zst'),
    ])
    assert.equal(
      listing.stdout.trim().replace(/ +/g, ' '),
      `-rwxr-xr-x 0/0 ${'#!/bin/sh\necho "fleetkit-agent 2.0.0"\n'.length} 1970-01-01 00:00:00 fleetkit-agent`,
    )
    const extracted = await run('bash', [
      '-c',
      'zstd -q -dc "$1" | tar -xO -f - fleetkit-agent',
      '-',
      join(out, 'fleetkit-agent-2.0.0-linux-amd64.tar.zst'),
    ])
    assert.equal(extracted.stdout, await readFile(join(dir, 'dist', 'linux-amd64', 'fleetkit-agent'), 'utf8'))
    const checked = await run('sha256sum', ['-c', '--strict', 'SHA256SUMS'], { cwd: out })
    assert.match(checked.stdout, /amd64\.tar\.zst: OK\n.*arm64\.tar\.zst: OK/)
  })

  it('packs only the architectures present and removes a stale signature', async () => {
    const dist = join(dir, 'dist-arm')
    await fakeAgent(dist, 'arm64', '2.0.1')
    const out = join(dir, 'arm')
    await mkdir(out, { recursive: true })
    await writeFile(join(out, 'SHA256SUMS.sig'), 'stale')
    const packed = await releaseJson('pack', ['--version', '2.0.1', '--input', dist, '--output', out])
    assert.equal(packed.code, 0, packed.stdout)
    assert.deepEqual((await readdir(out)).sort(), ['SHA256SUMS', 'fleetkit-agent-2.0.1-linux-arm64.tar.zst'])
  })

  it('refuses a bad version, an empty input and a symlinked binary with RELEASE_INPUT_INVALID', async () => {
    const linked = join(dir, 'dist-link', 'linux-amd64')
    await mkdir(linked, { recursive: true })
    await symlink('/bin/sh', join(linked, 'fleetkit-agent'))
    for (const args of [
      ['--version', '2.0.0;id', '--input', join(dir, 'dist')],
      ['--version', '2.0.0', '--input', join(dir, 'nothing-here')],
      ['--version', '2.0.0', '--input', join(dir, 'dist-link')],
    ]) {
      const refused = await releaseJson('pack', [...args, '--output', join(dir, 'refused')])
      assert.equal(refused.code, 10, refused.stdout)
      assert.equal(refused.json.code, 'RELEASE_INPUT_INVALID')
    }
  })
})
