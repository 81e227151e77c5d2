// The backup archive format: what the writer puts in comes out with the same bytes and SHA-256,
// and the extractor refuses what a hostile archive could use to write outside its directory.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { createTarGz, extractTarGz } from '../../../src/fs/tar-gz.js'
import { TarFormatError } from '../../../src/fs/ustar.js'

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

  it('refuses a file that is not gzip', async () => {
    await writeFile(join(dir, 'x.tar.gz'), 'not an archive at all')
    const out = join(dir, 'out')
    await mkdir(out)
    await assert.rejects(extractTarGz(join(dir, 'x.tar.gz'), out), TarFormatError)
  })
})
