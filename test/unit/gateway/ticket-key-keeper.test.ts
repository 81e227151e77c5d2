// The ticket keys are looked at every PKI reload interval: read again only when the file's stat changed.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { SETTLE_MS } from '../../../src/fs/stat-signature.js'
import { loadOrCreateTicketKeys, TicketKeyKeeper, ticketKeysPath } from '../../../src/gateway/tls/ticket-keys.js'
import { silentLogger } from '../../../src/log/logger.js'

describe('gateway: the ticket-key keeper reads the file only when it changed', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-tickets-unit-'))
  })
  afterEach(() => rm(dir, { recursive: true, force: true }))

  // A clock past the settle time, so the files just written count as settled.
  const clock = { now: () => new Date(Date.now() + SETTLE_MS + 1000) }

  async function keeper(read: (path: string) => Promise<Buffer>) {
    const applied: Buffer[] = []
    const k = await TicketKeyKeeper.open({
      pkiDir: dir,
      logger: silentLogger,
      intervalMs: 60_000,
      clock,
      read,
      apply: (keys) => applied.push(keys),
    })
    return { k, applied }
  }

  it('an untouched file is not read again; a new one is read and applied', async () => {
    let reads = 0
    const { k, applied } = await keeper((path) => {
      reads++
      return readFile(path)
    })
    assert.equal(await k.check(), 'unchanged')
    assert.equal(reads, 1)
    assert.equal(await k.check(), 'unchanged')
    assert.equal(await k.check(), 'unchanged')
    assert.equal(reads, 1, 'stat only')
    const next = randomBytes(48)
    await writeFile(ticketKeysPath(dir), next, { mode: 0o600 })
    assert.equal(await k.check(), 'replaced')
    assert.equal(reads, 2)
    assert.ok(applied[0]?.equals(next))
  })

  it('a read that failed (EMFILE) is tried again at the next check', async () => {
    let reads = 0
    const { k } = await keeper(async (path) => {
      reads++
      if (reads === 1) throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' })
      return readFile(path)
    })
    assert.equal(await k.check(), 'kept')
    assert.equal(await k.check(), 'unchanged')
    assert.equal(reads, 2)
  })

  it('first start: gateways starting together create the keys once and all serve the same; a short file is replaced whole', async () => {
    const started = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateTicketKeys(dir)))
    const onDisk = await readFile(ticketKeysPath(dir))
    assert.equal(onDisk.length, 48)
    for (const keys of started) assert.deepEqual(keys, onDisk)
    assert.deepEqual(await readdir(dir), ['tls-ticket-keys'], 'no temp file left')
    // An older fleetkit's file, cut short by a crash: replaced by whole keys, by a rename (a new inode).
    await writeFile(ticketKeysPath(dir), onDisk.subarray(0, 20), { mode: 0o600 })
    const before = (await stat(ticketKeysPath(dir))).ino
    const replaced = await loadOrCreateTicketKeys(dir)
    assert.equal(replaced.length, 48)
    assert.deepEqual(await readFile(ticketKeysPath(dir)), replaced)
    assert.notEqual((await stat(ticketKeysPath(dir))).ino, before)
    assert.equal((await stat(ticketKeysPath(dir))).mode & 0o777, 0o600)
  })
})
