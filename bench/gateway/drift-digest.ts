// The drift digest the ratio bench's heartbeats carry (--drift): one host fingerprint, recorded for
// each bench node as its last sync's, so the gateway judges every beat in sync from memory (the
// steady state of a converged fleet); what it adds per heartbeat is the figure.
import { fingerprintKeysDigest, fingerprintParts } from '../../src/gateway/drift/drift-judge.js'
import { sha256Hex } from '../../src/pki/fingerprint.js'
import type { DriftDigest } from '../../src/protocol/drift-report.js'
import type { StatePool } from '../../src/store/transaction.js'

/** About the size of a converged host's fingerprint: 90 paths, 12 units, packages, sysctls, nft, sshd. */
const ITEMS: Record<string, string> = Object.fromEntries([
  ...Array.from({ length: 90 }, (_, i) => [`path:/etc/fleetkit/file-${i}`, `100000:644:0:0:${sha256Hex(String(i))}`]),
  ...Array.from({ length: 12 }, (_, i) => [`unit:unit-${i}.service`, 'loaded:enabled:active']),
  ...Array.from({ length: 8 }, (_, i) => [`package:pkg-${i}`, 'ii:1.0']),
  ...Array.from({ length: 6 }, (_, i) => [`sysctl:net.x.y${i}`, '1']),
  ['nft:inet fleetkit', sha256Hex('nft')],
  ['sshd:effective', sha256Hex('sshd')],
])

/** Python's json.dumps(items, sort_keys=True) for ASCII items: the module's digest (fleetkit_fingerprint.py _digest). */
function moduleDigest(items: Record<string, string>): string {
  const keys = Object.keys(items).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  return sha256Hex(`{${keys.map((k) => `${JSON.stringify(k)}: ${JSON.stringify(items[k])}`).join(', ')}}`)
}

export const BENCH_DRIFT: DriftDigest = {
  digest: moduleDigest(ITEMS),
  keys_sha256: fingerprintKeysDigest(ITEMS),
  parts: fingerprintParts(ITEMS),
  checked_at: '2026-01-01T00:00:00Z',
}

/** Records ITEMS as each node's fingerprint (one sync run), so their heartbeats' digest is in sync. */
export async function recordBenchFingerprints(pool: StatePool, nodeIds: readonly string[]): Promise<void> {
  const { createSyncRun, finishSyncRun } = await import('../../src/store/sync/sync-ledger.js')
  const { recordNodeFingerprint } = await import('../../src/store/sync/node-fingerprints.js')
  const run = await createSyncRun(pool, {
    kind: 'sync',
    revision: null,
    definitionSha256: sha256Hex('bench'),
    planHash: sha256Hex('bench plan'),
    plan: {},
    startedBy: 'bench',
    pid: process.pid,
    nodes: [],
  })
  await finishSyncRun(pool, run.id, 'converged')
  for (const nodeId of nodeIds)
    await recordNodeFingerprint(pool, {
      nodeId,
      inputHash: sha256Hex('bench inputs'),
      digest: BENCH_DRIFT.digest,
      items: ITEMS,
      resources: [],
      runId: run.id,
      recordedAt: new Date(),
    })
}
