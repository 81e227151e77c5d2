// Reading a release from a local directory (`release verify --dir`, `release publish --dir`): every file,
// whatever it is, bounded by the limit; a FIFO, a device or a directory (through a link too) refused at once,
// never read without end or waited on; the same for `--ca-file`, before any connection.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { closeSync, constants, openSync } from 'node:fs'
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { type FleetkitError, isFleetkitError } from '../../../src/checks/fleetkit-error.js'
import { readReleaseFile } from '../../../src/release/release-source.js'

async function failure(work: Promise<unknown>): Promise<FleetkitError> {
  try {
    await work
  } catch (error) {
    assert.ok(isFleetkitError(error), String(error))
    return error
  }
  assert.fail('expected a refusal')
}

describe('release: reading a release from a directory', function () {
  this.timeout(20_000)
  let dir: string
  const limits = { maxBytes: 64 * 1024 }
  const read = (name: string) => readReleaseFile({ dir }, '1.0.0', name, limits)

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-release-source-'))
    await writeFile(join(dir, 'real'), 'sums\n')
    await symlink(join(dir, 'real'), join(dir, 'linked'))
    await symlink('/dev/zero', join(dir, 'zero'))
    execFileSync('mkfifo', [join(dir, 'fifo')])
    await symlink(join(dir, 'fifo'), join(dir, 'linked-fifo'))
    await mkdir(join(dir, 'directory'))
    await writeFile(join(dir, 'large'), Buffer.alloc(limits.maxBytes + 1))
  })
  after(async () => {
    // Should a read of the FIFO still wait (the bug this file guards against), a writer ends it.
    for (let i = 0; i < 4; i++) {
      try {
        closeSync(openSync(join(dir, 'fifo'), constants.O_WRONLY | constants.O_NONBLOCK))
      } catch {
        break // ENXIO: nobody reads it
      }
    }
    await rm(dir, { recursive: true, force: true })
  })

  it('reads a regular file, through a link too', async () => {
    assert.equal((await read('real')).toString(), 'sums\n')
    assert.equal((await read('linked')).toString(), 'sums\n')
  })

  it('refuses /dev/zero through a link, a FIFO with no writer and a directory at once: not a regular file', async () => {
    for (const name of ['zero', 'fifo', 'linked-fifo', 'directory']) {
      const error = await failure(read(name))
      assert.equal(error.code, 'RELEASE_DOWNLOAD_FAILED', name)
      assert.match(error.message, /is not a regular file/, name)
      assert.equal(error.data?.file, join(dir, name))
    }
  })

  it('refuses a file over the limit by its size, and a missing one as missing', async () => {
    const error = await failure(read('large'))
    assert.equal(error.code, 'RELEASE_DOWNLOAD_FAILED')
    assert.deepEqual([error.data?.expected, error.data?.actual], [limits.maxBytes, limits.maxBytes + 1])
    assert.match((await failure(read('absent'))).message, /no such file/)
  })

  it('--ca-file: /dev/zero or a FIFO is RELEASE_INPUT_INVALID before any connection', async () => {
    for (const name of ['zero', 'fifo']) {
      // Port 9 on loopback: nothing answers there, and nothing is asked.
      const source = { url: 'https://127.0.0.1:9/releases', caFile: join(dir, name) }
      const error = await failure(readReleaseFile(source, '1.0.0', 'SHA256SUMS', limits))
      assert.equal(error.code, 'RELEASE_INPUT_INVALID', name)
      assert.match(error.message, /cannot read the CA file .*not a regular file/, name)
    }
  })
})
