// `db archive fetch` on a machine whose disk fills during the fetch (a real OpenSSH sshd serving the
// off-host archive, the local archive directory on a small tmpfs): the failure is this machine's full
// disk (FILESYSTEM_WRITE_FAILED naming the local file), never ARCHIVE_REMOTE_FAILED blaming the remote,
// and what the fetch wrote is removed, so the same fetch runs again once there is room.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { toFleetkitError } from '../../../src/checks/fleetkit-error.js'
import { fetchRestorable, type Restorable } from '../../../src/lifecycle/state/archive-inspect.js'
import { checkedArchiveRemote } from '../../../src/store/embedded/archive-remote.js'
import { prepareArchiveDir } from '../../../src/store/embedded/archive-dir.js'
import { fileSha256 } from '../../../src/store/embedded/base-backup.js'
import { openSftpArchive, type SftpArchive } from '../../../src/sync/sftp-archive.js'
import { type OpenSshServer, startOpenSsh } from '../../support/openssh-server.js'
import { runProcess } from '../../support/process.js'

const SEGMENTS = ['000000010000000000000002', '000000010000000000000003']

describe('db archive fetch on a full local disk (real sshd, a small tmpfs)', function () {
  this.timeout(60_000)
  let root: string
  let remoteDir: string
  let tiny: string
  let mounted = false
  let sshd: OpenSshServer
  let files: SftpArchive
  let picked: Restorable

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleetkit-fetch-full-'))
    const sshDir = join(root, 'sshd')
    await mkdir(sshDir, { mode: 0o700 })
    sshd = await startOpenSsh(sshDir)
    // The off-host archive: a small base backup, then two segments larger than what the local disk has left.
    remoteDir = join(root, 'vault')
    await mkdir(join(remoteDir, 'base'), { recursive: true })
    await mkdir(join(remoteDir, 'wal'))
    await writeFile(join(remoteDir, 'base', 'L.tar.gz'), randomBytes(8 * 1024))
    await writeFile(join(remoteDir, 'base', 'L.json'), '{}\n')
    for (const name of SEGMENTS) await writeFile(join(remoteDir, 'wal', name), randomBytes(96 * 1024))
    const sums = new Map<string, string>()
    for (const file of ['base/L.tar.gz', 'base/L.json', ...SEGMENTS.map((n) => `wal/${n}`)])
      sums.set(file, await fileSha256(join(remoteDir, file)))
    picked = {
      base: {
        format: 'fleetkit-base-backup-1',
        label: 'L',
        file: 'L.tar.gz',
        startedAt: '2026-12-07T10:00:00.000Z',
        stoppedAt: '2026-12-07T10:00:01.000Z',
        startLsn: '0/2000028',
        stopLsn: '0/2000100',
        timeline: 1,
        systemIdentifier: '7000000000000000001',
        sha256: sums.get('base/L.tar.gz')!,
        bytes: 8 * 1024,
        files: 1,
      },
      wal: SEGMENTS,
      sums,
      chain: { start: '0000000000000002', newest: SEGMENTS[1]!, missing: [], missingCount: 0 },
    }
    const remote = await checkedArchiveRemote(
      {
        url: `ssh://${process.env.USER ?? 'root'}@127.0.0.1:${sshd.port}${remoteDir}`,
        hostKeyLine: sshd.knownHostsLine,
        identityFile: sshd.clientKey.path,
      },
      new Date(),
    )
    files = await openSftpArchive(remote, {})
    tiny = join(root, 'tiny')
    await mkdir(tiny)
    const mount = await runProcess('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0755', 'tmpfs', tiny])
    if (mount.code !== 0)
      throw new Error(`mount tmpfs exited ${mount.code}: these tests run as root (${mount.stderr.trim()})`)
    mounted = true
  })
  after(async () => {
    files?.close()
    await sshd?.stop()
    if (mounted) await runProcess('umount', [tiny])
    await rm(root, { recursive: true, force: true })
  })

  it('a file fetched onto a full disk fails as FILESYSTEM_WRITE_FAILED naming the local file, not as the remote', async () => {
    const local = join(tiny, `${SEGMENTS[0]}.part`)
    try {
      await assert.rejects(files.get(`wal/${SEGMENTS[0]}`, local), (error: unknown) => {
        const coded = toFleetkitError(error)
        assert.equal(coded.code, 'FILESYSTEM_WRITE_FAILED', coded.message)
        assert.equal(coded.data?.errno, 'ENOSPC')
        assert.equal(coded.data?.path, local)
        return true
      })
    } finally {
      await rm(local, { force: true })
    }
  })

  it('the fetch removes what it wrote on a full disk, and fetches whole once there is room', async () => {
    const layout = await prepareArchiveDir(join(tiny, 'archive'), undefined)
    await assert.rejects(
      fetchRestorable(files, picked, layout, undefined, () => undefined),
      (error: unknown) => {
        assert.equal(toFleetkitError(error).code, 'FILESYSTEM_WRITE_FAILED', String(error))
        return true
      },
    )
    // The base backup fitted and was renamed into place before the first segment filled the disk: gone too.
    assert.deepEqual(await readdir(layout.baseDir), [])
    assert.deepEqual(await readdir(layout.walDir), [])
    const grown = await runProcess('mount', ['-o', 'remount,size=1m', tiny])
    assert.equal(grown.code, 0, grown.stderr)
    assert.equal(await fetchRestorable(files, picked, layout, undefined, () => undefined), 4)
    assert.deepEqual((await readdir(layout.baseDir)).sort(), ['L.json', 'L.tar.gz'])
    assert.deepEqual((await readdir(layout.walDir)).sort(), SEGMENTS)
    assert.equal(await fileSha256(join(layout.walDir, SEGMENTS[1]!)), picked.sums.get(`wal/${SEGMENTS[1]}`))
  })
})
