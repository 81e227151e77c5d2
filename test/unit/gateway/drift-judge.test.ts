// The drift rule: a host's digest against the recorded fingerprint, the parts named from the recorded
// items exactly as the host's check names them (the module's own Python computes the other side here).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'

import {
  fingerprintKeysDigest,
  fingerprintParts,
  judgeDrift,
  judgedBaseline,
} from '../../../src/gateway/drift/drift-judge.js'
import type { DriftDigest } from '../../../src/protocol/drift-report.js'
import { driftEventFor, sameDrift } from '../../../src/store/nodes/node-drift.js'

const ITEMS: Record<string, string> = {
  'nft:inet fleetkit': 'a'.repeat(64),
  'sshd:effective': 'b'.repeat(64),
  'unit:fleetkit-agent.service': 'loaded:enabled:active',
  'unit:docker.service': 'not-found::inactive',
  'path:/etc/fleetkit/agent.env': '100000:644:0:0:' + 'c'.repeat(64),
  'path:/etc/ssh/sshd_config.d/fleetkit.conf': '100000:644:0:0:' + 'd'.repeat(64),
  'sysctl:net.ipv4.ip_forward': '1',
  'host:facts': 'x:y:z',
}

/** What the module computes for these items on a host: parts(), keys_digest() and the digest. */
function pythonSide(items: Record<string, string>): { parts: Record<string, string>; keys: string; digest: string } {
  const program = `
import json, sys
sys.path.insert(0, 'ansible/playbooks/library')
import fleetkit_fingerprint as f
items = json.loads(sys.stdin.read())
print(json.dumps({'parts': f.parts(items), 'keys': f.keys_digest(items), 'digest': f._digest(items)}))
`
  return JSON.parse(execFileSync('python3', ['-c', program], { input: JSON.stringify(items) }).toString()) as {
    parts: Record<string, string>
    keys: string
    digest: string
  }
}

function report(items: Record<string, string>, checkedAt = '2026-12-06T20:00:00Z'): DriftDigest {
  const py = pythonSide(items)
  return { digest: py.digest, keys_sha256: py.keys, parts: py.parts, checked_at: checkedAt }
}

describe('gateway drift judge', () => {
  const recorded = () => {
    const py = pythonSide(ITEMS)
    return judgedBaseline({ digest: py.digest, items: ITEMS, runId: 7, recordedAt: new Date(0) })
  }

  it('names the parts and the resource list exactly as the host check does', () => {
    const py = pythonSide(ITEMS)
    assert.deepEqual(fingerprintParts(ITEMS), py.parts)
    assert.equal(fingerprintKeysDigest(ITEMS), py.keys)
    assert.deepEqual(Object.keys(py.parts).sort(), ['host', 'nft', 'path', 'sshd', 'sysctl', 'unit'])
  })

  it('the same digest is in sync; a rule added and sshd changed is drifted in nft and sshd', () => {
    const same = judgeDrift(recorded(), report(ITEMS))
    assert.equal(same.state, 'in_sync')
    assert.deepEqual(same.parts, [])
    assert.equal(same.fingerprintRunId, 7)
    const moved = judgeDrift(
      recorded(),
      report({ ...ITEMS, 'nft:inet fleetkit': 'e'.repeat(64), 'sshd:effective': 'f'.repeat(64) }),
    )
    assert.equal(moved.state, 'drifted')
    assert.deepEqual(moved.parts, ['nft', 'sshd'])
    assert.equal(moved.hostCheckedAt?.toISOString(), '2026-12-06T20:00:00.000Z')
    const stopped = judgeDrift(
      recorded(),
      report({ ...ITEMS, 'unit:fleetkit-agent.service': 'loaded:enabled:inactive' }),
    )
    assert.deepEqual(stopped.parts, ['unit'])
  })

  it('another resource list, no fingerprint or no digest is unknown, never drifted', () => {
    const listed = judgeDrift(recorded(), report({ ...ITEMS, 'path:/etc/new': 'absent' }))
    assert.deepEqual([listed.state, listed.reason], ['unknown', 'other_resources'])
    const none = judgeDrift(null, report(ITEMS))
    assert.deepEqual([none.state, none.reason], ['unknown', 'no_fingerprint'])
    const stale = judgeDrift(recorded(), { unavailable: 'stale' })
    assert.deepEqual([stale.state, stale.reason, stale.digest], ['unknown', 'stale', null])
  })

  it('an event on entering drift, on other parts drifting and on clearing; none for the rest', () => {
    const drifted = (parts: string[]) => ({ state: 'drifted' as const, parts })
    const inSync = { state: 'in_sync' as const, parts: [] }
    const unknown = { state: 'unknown' as const, parts: [] }
    assert.equal(driftEventFor(null, drifted(['nft'])), 'node_drifted')
    assert.equal(driftEventFor(inSync, drifted(['nft'])), 'node_drifted')
    assert.equal(driftEventFor(drifted(['nft']), drifted(['nft'])), null)
    assert.equal(driftEventFor(drifted(['nft']), drifted(['nft', 'sshd'])), 'node_drifted')
    assert.equal(driftEventFor(drifted(['nft']), inSync), 'node_drift_cleared')
    assert.equal(driftEventFor(drifted(['nft']), unknown), null)
    assert.equal(driftEventFor(null, inSync), null)
    assert.equal(driftEventFor(unknown, inSync), null)
    assert.ok(sameDrift({ ...drifted(['nft']), reason: null }, { ...drifted(['nft']), reason: null }))
    assert.ok(!sameDrift({ ...unknown, reason: 'stale' }, { ...unknown, reason: 'no_state' }))
  })
})
