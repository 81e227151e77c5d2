// A command's BUSY code names its own lock only: a lock timeout from work inside it (a lock that work took
// and waited for) keeps its own error, not "another install / PKI command holds <this lock>".
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { LockTimeoutError, withFileLock } from '../../../src/fs/file-lock.js'
import { withInstallLock } from '../../../src/gateway/install/install-lock.js'
import { withPkiLock } from '../../../src/pki/pki-lock.js'

describe('BUSY codes name their own lock only', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-busy-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('PKI_BUSY: its own lock held; a lock timeout from inside passes through unchanged', async () => {
    const inner = new LockTimeoutError(join(dir, 'restore.lock'), 4242)
    await assert.rejects(
      withPkiLock(dir, () => Promise.reject(inner)),
      (error: unknown) => error === inner,
    )
    await withFileLock(join(dir, '.pki.lock'), () =>
      assert.rejects(
        withPkiLock(dir, () => Promise.resolve(), { timeoutMs: 50 }),
        { code: 'PKI_BUSY' },
      ),
    )
  })

  it('GATEWAY_INSTALL_BUSY: its own lock held; a lock timeout from inside passes through unchanged', async () => {
    const path = join(dir, 'install.lock')
    const inner = new LockTimeoutError(join(dir, 'state', 'postgres', 'start.lock'), 4242)
    await assert.rejects(
      withInstallLock('install', () => Promise.reject(inner), { path }),
      (error: unknown) => error === inner,
    )
    await withFileLock(path, () =>
      assert.rejects(
        withInstallLock('install', () => Promise.resolve(), { path, timeoutMs: 50, pollMs: 10 }),
        {
          code: 'GATEWAY_INSTALL_BUSY',
        },
      ),
    )
  })
})
