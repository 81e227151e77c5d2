// The agent's drift report from the check's state file: a digest, or why there is none.
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

import { DRIFT_STATE_PATH, DRIFT_STATE_STALE_MS, readDriftState } from '../../../src/agent/drift-state.js'
import type { Host } from '../../../src/agent/host.js'

const SHA = 'b'.repeat(64)
const STATE = {
  checked_at: '2026-12-06T20:00:00Z',
  cost: { cpu_ms: 80, read_blocks: 0, read_bytes: 4096, wall_ms: 90 },
  digest: SHA,
  keys_sha256: SHA,
  parts: { nft: SHA },
}

describe('agent: drift state', () => {
  let root: string
  let host: Host
  const file = () => join(root, DRIFT_STATE_PATH)
  const write = async (content: string, modified: Date) => {
    await mkdir(dirname(file()), { recursive: true })
    await writeFile(file(), content)
    await utimes(file(), modified, modified)
  }
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'drift-state-'))
    host = { root, run: async () => ({ exitCode: 0, stdout: '', stderr: '' }) }
  })
  afterEach(async () => {
    await rm(root, { recursive: true, force: true })
  })

  it('no state file: no_state', async () => {
    assert.deepEqual(await readDriftState(host, new Date()), { unavailable: 'no_state' })
  })

  it('sends the digests, not the cost or anything else, while the state is fresh', async () => {
    const now = new Date('2026-12-06T20:01:00Z')
    await write(JSON.stringify(STATE), new Date(now.getTime() - 60_000))
    assert.deepEqual(await readDriftState(host, now), {
      digest: SHA,
      keys_sha256: SHA,
      parts: { nft: SHA },
      checked_at: '2026-12-06T20:00:00Z',
    })
  })

  it('a state older than five timer periods is stale; a check without a list is no_list; garbage is unreadable', async () => {
    const now = new Date('2026-12-06T20:30:00Z')
    await write(JSON.stringify(STATE), new Date(now.getTime() - DRIFT_STATE_STALE_MS - 1000))
    assert.deepEqual(await readDriftState(host, now), { unavailable: 'stale' })
    await write(JSON.stringify({ error: 'FileNotFoundError: x', checked_at: STATE.checked_at }), now)
    assert.deepEqual(await readDriftState(host, now), { unavailable: 'no_list' })
    await write('{not json', now)
    assert.deepEqual(await readDriftState(host, now), { unavailable: 'unreadable' })
  })
})
