// The off-host archive's pure parts: the ssh:// URL and host key `remote add` takes, and the WAL chain
// `verify` judges a restore by.
import assert from 'node:assert/strict'

import { parseHostKey, parseRemoteUrl } from '../../../src/store/embedded/archive-remote.js'
import { isFinishedWalFile, nextPosition, walChain } from '../../../src/store/embedded/wal-chain.js'

const hasCode = (code: string) => (error: unknown) => (error as { code?: string }).code === code
// A real ed25519 public key blob (its type string inside says ssh-ed25519).
const ED25519 = 'AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl'

describe('the off-host archive: URL and host key', () => {
  it('takes ssh://user@host[:port]/path and refuses a password, no user, a relative or odd path', () => {
    assert.deepEqual(parseRemoteUrl('ssh://backup@vault.example.net:2222/srv/fleetkit-archive/'), {
      url: 'ssh://backup@vault.example.net:2222/srv/fleetkit-archive',
      user: 'backup',
      host: 'vault.example.net',
      port: 2222,
      path: '/srv/fleetkit-archive',
    })
    assert.equal(parseRemoteUrl('ssh://backup@[2001:db8::1]/srv/a').host, '2001:db8::1')
    assert.equal(parseRemoteUrl('ssh://backup@vault/srv/a').port, 22)
    for (const bad of [
      'ssh://backup:secret@vault/srv/a',
      'ssh://vault/srv/a',
      'sftp://backup@vault/srv/a',
      'ssh://backup@vault/',
      'ssh://backup@vault/srv/../etc',
      'ssh://backup@vault/srv/a b',
      'ssh://backup@vault/srv/a?x=1',
      '/srv/a',
    ])
      assert.throws(() => parseRemoteUrl(bad), hasCode('ARCHIVE_REMOTE_INVALID'), bad)
  })

  it('pins a known_hosts line for this host (or a bare key), and refuses another host, type or bytes', () => {
    assert.equal(parseHostKey(`vault ssh-ed25519 ${ED25519} comment`, 'vault', 22), `ssh-ed25519 ${ED25519}`)
    assert.equal(parseHostKey(`[vault]:2222 ssh-ed25519 ${ED25519}`, 'vault', 2222), `ssh-ed25519 ${ED25519}`)
    assert.equal(parseHostKey(`ssh-ed25519 ${ED25519}`, 'vault', 2222), `ssh-ed25519 ${ED25519}`)
    // A hashed host field cannot be compared: taken as it is.
    assert.equal(parseHostKey(`|1|abc=|def= ssh-ed25519 ${ED25519}`, 'vault', 22), `ssh-ed25519 ${ED25519}`)
    for (const [line, port] of [
      [`other ssh-ed25519 ${ED25519}`, 22],
      [`vault ssh-ed25519 ${ED25519}`, 2222],
      [`vault ecdsa-sha2-nistp256 ${ED25519}`, 22],
      ['vault ssh-ed25519 AAAA', 22],
      ['ssh-dss AAAAB3NzaC1kc3MAAACBAP', 22],
      ['', 22],
    ] as const)
      assert.throws(() => parseHostKey(line, 'vault', port), hasCode('ARCHIVE_REMOTE_INVALID'), line)
  })
})

describe('the off-host archive: the WAL chain from a base backup', () => {
  const seg = (tli: number, position: string) => tli.toString(16).toUpperCase().padStart(8, '0') + position

  it('steps positions as PostgreSQL names 16 MiB segments (256 to a log file)', () => {
    assert.equal(nextPosition('0000000000000001'), '0000000000000002')
    assert.equal(nextPosition('00000000000000FF'), '0000000100000000')
    assert.equal(nextPosition('00000003000000AE'), '00000003000000AF')
  })

  it('is whole from the start to the newest, across a later timeline; a gap is named', () => {
    const names = [
      seg(1, '0000000000000001'),
      seg(1, '0000000000000002'),
      seg(1, '0000000000000003'),
      '00000002.history',
      seg(2, '0000000000000004'),
      `${seg(1, '0000000000000002')}.00000028.backup`,
    ]
    assert.deepEqual(walChain(names, '0000000000000002', 1), {
      newest: seg(2, '0000000000000004'),
      missing: [],
      missingCount: 0,
    })
    const gap = walChain(
      names.filter((n) => n !== seg(1, '0000000000000003')),
      '0000000000000002',
      1,
    )
    assert.deepEqual(gap.missing, ['0000000000000003'])
    // A segment of an earlier timeline than the backup's does not count.
    assert.equal(walChain([seg(1, '0000000000000005')], '0000000000000005', 2).missingCount, 1)
  })

  it('ships finished files only', () => {
    assert.ok(isFinishedWalFile(seg(1, '0000000000000001')))
    assert.ok(isFinishedWalFile('00000002.history'))
    assert.ok(isFinishedWalFile(`${seg(1, '0000000000000002')}.00000028.backup`))
    assert.ok(!isFinishedWalFile(`${seg(1, '0000000000000001')}.part`))
    assert.ok(!isFinishedWalFile(`${seg(1, '0000000000000001')}.partial`))
    assert.ok(!isFinishedWalFile('archive.lock'))
  })
})
