// The backup archive format: what the writer puts in comes out with the same bytes and SHA-256,
// and the extractor refuses what a hostile archive could use to write outside its directory.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { toFleetkitError } from '../../../src/checks/fleetkit-error.js'
import { createTarGz, extractTarGz, type OpenArchiveFile } from '../../../src/fs/tar-gz.js'
import { TarFormatError } from '../../../src/fs/ustar.js'
import { smallDisk } from '../../support/small-disk.js'

describe('fs: the backup archive (tar.gz)', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-tar-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('round-trips files and bytes with their SHA-256; GNU tar reads what it writes', async () => {
    const source = join(dir, 'big.bin')
    await writeFile(source, Buffer.alloc(70_000, 7))
    const archive = join(dir, 'a.tar.gz')
    const writer = await createTarGz(archive)
    const a = await writer.addFile('db/big.bin', source)
    const b = await writer.addBytes('manifest.json', Buffer.from('{"x":1}\n'))
    await writer.finish()
    assert.match(execFileSync('tar', ['-tzf', archive], { encoding: 'utf8' }), /db\/big\.bin\nmanifest\.json/)
    const out = join(dir, 'out')
    await mkdir(out)
    const members = await extractTarGz(archive, out)
    assert.deepEqual(
      members.filter((m) => m.type === 'file').map((m) => [m.name, m.sha256]),
      [
        ['db/big.bin', a.sha256],
        ['manifest.json', b.sha256],
      ],
    )
    assert.deepEqual(await readFile(join(out, 'db/big.bin')), await readFile(source))
  })

  for (const [what, make] of [
    ['an absolute name', (d: string) => ['-czPf', join(d, 'x.tar.gz'), join(d, 'payload')]],
    ['a name with ..', (d: string) => ['-czPf', join(d, 'x.tar.gz'), '-C', join(d, 'sub'), '../payload']],
    ['a symbolic link', (d: string) => ['-czf', join(d, 'x.tar.gz'), '-C', d, 'link']],
  ] as const) {
    it(`refuses ${what} and writes nothing outside`, async () => {
      await writeFile(join(dir, 'payload'), 'p')
      await mkdir(join(dir, 'sub'))
      await symlink('/etc/passwd', join(dir, 'link'))
      execFileSync('tar', make(dir))
      const out = join(dir, 'out')
      await mkdir(out)
      await assert.rejects(extractTarGz(join(dir, 'x.tar.gz'), out), TarFormatError)
      assert.equal(existsSync(join(out, 'link')), false)
    })
  }

  it('maxBytes: the member that would pass it is refused at its header, never created', async () => {
    const archive = join(dir, 'a.tar.gz')
    const writer = await createTarGz(archive)
    await writer.addBytes('db/a.jsonl', Buffer.alloc(600 * 1024, 1))
    await writer.addBytes('db/b.jsonl', Buffer.alloc(600 * 1024, 2))
    await writer.finish()
    const out = join(dir, 'out')
    await mkdir(out)
    const error = await extractTarGz(archive, out, { maxBytes: 1024 * 1024 }).then(
      () => undefined,
      (e: unknown) => e,
    )
    assert.ok(error instanceof TarFormatError, String(error))
    assert.match(error.message, /unpacks to more than 1048576 bytes \(member db\/b\.jsonl declares 614400 after 614400/)
    assert.equal(existsSync(join(out, 'db/a.jsonl')), true)
    assert.equal(existsSync(join(out, 'db/b.jsonl')), false, 'the member past the bound is never created')
    // Exactly at the bound is within it.
    const again = join(dir, 'again')
    await mkdir(again)
    assert.equal((await extractTarGz(archive, again, { maxBytes: 1200 * 1024 })).length, 2)
  })

  it('refuses a file that is not gzip', async () => {
    await writeFile(join(dir, 'x.tar.gz'), 'not an archive at all')
    const out = join(dir, 'out')
    await mkdir(out)
    await assert.rejects(extractTarGz(join(dir, 'x.tar.gz'), out), TarFormatError)
  })

  describe('a disk that fills while writing (short writes)', () => {
    async function archiveBytes(open?: OpenArchiveFile): Promise<{ path: string; sha256: string; size: number }> {
      const path = join(dir, `a-${Math.random().toString(16).slice(2)}.tar.gz`)
      const writer = await createTarGz(path, open ? { open } : {})
      await writer.addBytes('db/rows.jsonl', Buffer.from('{"id":1}\n'.repeat(3000)))
      await writer.addBytes('manifest.json', Buffer.from('{"x":1}\n'))
      return { path, ...(await writer.finish()) }
    }

    it('a short last write is an error naming the file (FILESYSTEM_WRITE_FAILED), never a whole-looking archive', async () => {
      const whole = await archiveBytes()
      // Room for all but the last byte: the last write is short, and nothing after it would fail.
      const disk = smallDisk(whole.size - 1)
      const path = join(dir, 'short.tar.gz')
      const writer = await createTarGz(path, { open: disk.open })
      await writer.addBytes('db/rows.jsonl', Buffer.from('{"id":1}\n'.repeat(3000)))
      await writer.addBytes('manifest.json', Buffer.from('{"x":1}\n'))
      const error = await writer.finish().then(
        () => assert.fail('finish() reported a truncated archive as written'),
        (e: unknown) => e,
      )
      assert.equal(disk.shortWrites, 1)
      const coded = toFleetkitError(error)
      assert.equal(coded.code, 'FILESYSTEM_WRITE_FAILED')
      assert.deepEqual(coded.data, { errno: 'ENOSPC', syscall: 'write', path })
      assert.match(coded.message, new RegExp(`could not write ${path} \\(ENOSPC`))
    })

    it('a short write that the next write completes gives the whole archive, its SHA-256 and size true', async () => {
      const whole = await archiveBytes()
      const disk = smallDisk(100, { resumes: true })
      const written = await archiveBytes(disk.open)
      assert.equal(disk.shortWrites, 1)
      assert.deepEqual([written.sha256, written.size], [whole.sha256, whole.size])
      const bytes = await readFile(written.path)
      assert.equal(createHash('sha256').update(bytes).digest('hex'), written.sha256)
      execFileSync('tar', ['-tzf', written.path])
    })

    it('extraction: a short write is an error naming the extracted file, not a truncated file that passes', async () => {
      const archive = await archiveBytes()
      const out = join(dir, 'out')
      await mkdir(out)
      const error = await extractTarGz(archive.path, out, { open: smallDisk(1000).open }).then(
        () => assert.fail('extraction reported a truncated file as written'),
        (e: unknown) => e,
      )
      const coded = toFleetkitError(error)
      assert.equal(coded.code, 'FILESYSTEM_WRITE_FAILED')
      assert.equal(coded.data?.path, join(out, 'db/rows.jsonl'))
      // And one whose short write is completed extracts whole.
      const again = join(dir, 'again')
      await mkdir(again)
      await extractTarGz(archive.path, again, { open: smallDisk(1000, { resumes: true }).open })
      assert.equal(await readFile(join(again, 'db/rows.jsonl'), 'utf8'), '{"id":1}\n'.repeat(3000))
    })
  })
})
