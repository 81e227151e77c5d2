// `db restore` of a gzip bomb: a small file whose member expands a thousandfold is BACKUP_INVALID at that
// member's header, before it is written into TMPDIR, with no database opened and nothing left behind.
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readdir, rm, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { isFleetkitError } from '../../../src/checks/fleetkit-error.js'
import { createTarGz } from '../../../src/fs/tar-gz.js'
import { restoreState } from '../../../src/lifecycle/state/db-restore.js'

describe('db restore: what a backup may unpack to is bounded', function () {
  this.timeout(60_000)
  let dir: string
  let tmp: string
  const savedTmpdir = process.env.TMPDIR

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-restore-bound-'))
    tmp = join(dir, 'tmp')
    await mkdir(tmp)
    // The restore unpacks under os.tmpdir(), which reads TMPDIR at each call.
    process.env.TMPDIR = tmp
  })
  after(async () => {
    if (savedTmpdir === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = savedTmpdir
    await rm(dir, { recursive: true, force: true })
  })

  it('a member of 80 MiB of zeros in a file of about 80 KB: BACKUP_INVALID, nothing unpacked, no database opened', async () => {
    const zeros = join(dir, 'zeros')
    await writeFile(zeros, '')
    await truncate(zeros, 80 * 1024 * 1024)
    const bomb = join(dir, 'bomb.tar.gz')
    const writer = await createTarGz(bomb)
    await writer.addFile('db/nodes.jsonl', zeros)
    await writer.finish()
    let opened = false
    const error = await restoreState({
      withPool: () => {
        opened = true
        throw new Error('a refused file opens no database')
      },
      file: bomb,
      pkiDir: join(dir, 'pki'),
      force: false,
      actor: 'test',
      now: new Date(),
      migrations: [],
    }).then(
      () => undefined,
      (e: unknown) => e,
    )
    assert.ok(isFleetkitError(error), String(error))
    assert.equal(error.code, 'BACKUP_INVALID', error.message)
    // The floor of the ceiling (64 MiB) applies: 100 times the file's size is less.
    assert.match(String(error.data?.problem), /^it unpacks to more than 67108864 bytes \(member db\/nodes\.jsonl/)
    assert.equal(opened, false)
    assert.deepEqual(await readdir(tmp), [], 'the unpacking directory is removed')
  })
})
