// The fast path's pure rules: what a recorded fingerprint was given (the run folder taken out),
// which recorded fingerprints are worth probing, and what differs between two readings.
import assert from 'node:assert/strict'

import {
  differingItems,
  FINGERPRINT_MAX_AGE_MS,
  fingerprintInputHash,
  probeCandidates,
} from '../../../src/sync/fingerprint.js'
import type { NodeFingerprintRow } from '../../../src/store/sync/node-fingerprints.js'
import type { RunContext } from '../../../src/sync/run-context.js'
import { guarded } from '../../../src/sync/run-steps.js'

const row = (nodeId: string, inputHash: string, recordedAt: Date): NodeFingerprintRow => ({
  nodeId,
  inputHash,
  digest: 'd'.repeat(64),
  items: {},
  resources: [],
  runId: 1,
  recordedAt,
})

describe('sync fingerprint rules', () => {
  it('the input hash ignores the run folder and follows the content, the inventory and the known hosts', () => {
    const inventory = (dir: string) => `all:\n  vars:\n    fleetkit_known_hosts_file: ${dir}/known_hosts\n`
    const a = fingerprintInputHash('c1', inventory('/state/sync/run-1'), 'k1', '/state/sync/run-1')
    assert.equal(fingerprintInputHash('c1', inventory('/state/sync/run-2'), 'k1', '/state/sync/run-2'), a)
    assert.notEqual(fingerprintInputHash('c2', inventory('/state/sync/run-1'), 'k1', '/state/sync/run-1'), a)
    assert.notEqual(
      fingerprintInputHash('c1', `${inventory('/state/sync/run-1')}    extra: 1\n`, 'k1', '/state/sync/run-1'),
      a,
    )
    assert.notEqual(fingerprintInputHash('c1', inventory('/state/sync/run-1'), 'k2', '/state/sync/run-1'), a)
  })

  it('probes only fingerprints recorded for the same inputs within a day', () => {
    const now = new Date('2026-12-01T12:00:00Z')
    const rows = [
      row('fresh', 'h1', new Date(now.getTime() - 60_000)),
      row('other-inputs', 'h0', new Date(now.getTime() - 60_000)),
      row('a-day-old', 'h1', new Date(now.getTime() - FINGERPRINT_MAX_AGE_MS)),
    ]
    assert.deepEqual(
      probeCandidates(rows, 'h1', now).map((r) => r.nodeId),
      ['fresh'],
    )
    assert.deepEqual(
      probeCandidates(rows, 'h1', now, 2 * FINGERPRINT_MAX_AGE_MS).map((r) => r.nodeId),
      ['fresh', 'a-day-old'],
    )
  })

  it('names every item whose digest moved, appeared or went away', () => {
    const recorded = { 'path:/etc/a': '1', 'unit:x.service': 'loaded:enabled:active', 'nft:inet fleetkit': 'aa' }
    assert.deepEqual(differingItems(recorded, { ...recorded }), [])
    assert.deepEqual(
      differingItems(recorded, {
        'path:/etc/a': '2',
        'unit:x.service': 'loaded:enabled:active',
        'package:curl': 'ii:1',
      }),
      ['nft:inet fleetkit', 'package:curl', 'path:/etc/a'],
    )
  })

  it('a fingerprint that cannot be read costs speed, never the sync; an interrupted sync still stops', async () => {
    const notes: string[] = []
    const ctx = (aborted: boolean) => ({ options: { signal: { aborted } } }) as unknown as RunContext
    const failing = () => Promise.reject(new Error('ansible-playbook: No space left on device\nmore'))
    assert.equal(await guarded(ctx(false), (l) => notes.push(l), 'compared', failing, 'fallback'), 'fallback')
    assert.deepEqual(notes, [
      'Fingerprints not compared (ansible-playbook: No space left on device): every node runs in full.',
    ])
    await assert.rejects(
      guarded(ctx(true), () => undefined, 'recorded', failing, 'fallback'),
      /No space left/,
    )
  })
})
