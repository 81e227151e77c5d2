// `fleetkit reconcile`'s rules without a database or a host: which nodes it repairs and leaves alone
// (from a fleet ready verdict and the holds), its hourly budget on an injected clock, and its batches.
import assert from 'node:assert/strict'

import { fixedClock } from '../../../src/config/clock.js'
import { repairBatches, runBudget } from '../../../src/lifecycle/reconcile/reconcile-budget.js'
import { classifyForReconcile } from '../../../src/lifecycle/reconcile/reconcile-selection.js'
import type { FleetReadyResult } from '../../../src/lifecycle/view/fleet-ready.js'
import type { NodeHold } from '../../../src/store/nodes/node-holds.js'

type Node = FleetReadyResult['nodes'][number]
type Criterion = Node['failures'][number]['criterion']

function node(nodeId: string, status: string, ...criteria: Criterion[]): Node {
  return {
    nodeId,
    pool: 'web',
    status,
    ready: criteria.length === 0,
    failures: criteria.map((criterion) => ({
      criterion,
      code: 'NODE_NOT_CONVERGED',
      detail: `${criterion} detail`,
      next: 'fleetkit sync',
    })),
  }
}

function verdict(...nodes: Node[]): FleetReadyResult {
  return { ready: false, definitionSha256: null, acceptedAgentVersion: null, pools: [], nodes }
}

describe('reconcile: the selection from fleet ready and the holds', () => {
  it('repairs drifted nodes and behind ones (not converged for this definition, or another agent version)', () => {
    const s = classifyForReconcile(
      verdict(
        node('web-3', 'active', 'agent_version'),
        node('web-1', 'active', 'drift'),
        node('web-2', 'active', 'converged'),
        node('web-4', 'active'),
        // Both: drift is the reason named.
        node('web-5', 'active', 'converged', 'drift'),
      ),
      [],
    )
    assert.deepEqual(
      s.repair.map((c) => [c.nodeId, c.why]),
      [
        ['web-1', 'drifted'],
        ['web-2', 'behind'],
        ['web-3', 'behind'],
        ['web-5', 'drifted'],
      ],
    )
    assert.deepEqual(s.eligible, ['web-1', 'web-2', 'web-3', 'web-4', 'web-5'])
    assert.deepEqual(s.skipped, [])
  })

  it('leaves alone held, draining, parked, not admitted, unhealthy, lost and unknown nodes, each with its reason', () => {
    const hold: NodeHold = { nodeId: 'h-1', reason: 'disk swap', heldBy: 'ops@desk', heldAt: new Date(0) }
    const s = classifyForReconcile(
      verdict(
        node('h-1', 'active', 'drift'),
        node('d-1', 'draining', 'admitted', 'drift'),
        node('p-1', 'parked', 'admitted', 'converged'),
        node('a-1', 'active', 'admitted', 'converged'),
        node('u-1', 'unhealthy', 'healthy', 'converged'),
        node('l-1', 'lost', 'admitted', 'healthy'),
        node('n-1', 'unknown', 'admitted'),
      ),
      [hold],
    )
    assert.deepEqual(s.repair, [])
    assert.deepEqual(s.eligible, [])
    const reasons = Object.fromEntries(s.skipped.map((k) => [k.nodeId, k.reason]))
    assert.match(reasons['h-1']!, /^held by ops@desk since 1970-01-01T00:00:00.000Z: disk swap$/)
    assert.match(reasons['d-1']!, /^draining/)
    assert.match(reasons['p-1']!, /^parked/)
    assert.match(reasons['a-1']!, /not admitted \(fleetkit node admit a-1\)/)
    assert.match(reasons['u-1']!, /^unhealthy/)
    assert.match(reasons['l-1']!, /^lost/)
    assert.match(reasons['n-1']!, /not in the state/)
  })

  it('a node whose host checks fail but is otherwise serving is still repaired', () => {
    const s = classifyForReconcile(verdict(node('web-1', 'active', 'healthy', 'converged')), [])
    assert.deepEqual(
      s.repair.map((c) => c.nodeId),
      ['web-1'],
    )
  })
})

describe('reconcile: the hourly budget on an injected clock', () => {
  const clock = fixedClock(new Date('2026-12-06T12:00:00Z'))
  const at = (iso: string) => new Date(`2026-12-06T${iso}Z`)

  it('counts the runs of the last hour only; none spent leaves all', () => {
    assert.deepEqual(runBudget({ startedAt: [], now: clock.now(), maxPerHour: 3 }), {
      used: 0,
      left: 3,
      max: 3,
      nextSlotAt: null,
    })
    const b = runBudget({
      startedAt: [at('10:59:59'), at('11:00:00'), at('11:30:00')],
      now: clock.now(),
      maxPerHour: 3,
    })
    assert.deepEqual([b.used, b.left, b.nextSlotAt], [1, 2, null], 'a run exactly an hour ago has left the window')
  })

  it('spent: the next slot is when the oldest run in the window is an hour old; time frees it', () => {
    const startedAt = [at('11:40:00'), at('11:10:00'), at('11:50:00')]
    const spent = runBudget({ startedAt, now: clock.now(), maxPerHour: 2 })
    assert.deepEqual([spent.used, spent.left], [3, 0])
    // Two must leave before one fits again under a budget of 2 with three in the window.
    assert.equal(spent.nextSlotAt?.toISOString(), '2026-12-06T12:40:00.000Z')
    clock.set(at('12:40:00'))
    const later = runBudget({ startedAt, now: clock.now(), maxPerHour: 2 })
    assert.deepEqual([later.used, later.left, later.nextSlotAt], [1, 1, null])
  })
})

describe('reconcile: the runs of a pass', () => {
  it('the canary alone first (the declared one when it is to be repaired), then at most N per run', () => {
    assert.deepEqual(repairBatches(['c', 'a', 'e', 'b', 'd'], 'c', 2), [['c'], ['a', 'b'], ['d', 'e']])
    assert.deepEqual(repairBatches(['c', 'a', 'b'], 'z', 5), [['a'], ['b', 'c']], 'else the first by id')
    assert.deepEqual(repairBatches(['a'], null, 3), [['a']])
    assert.deepEqual(repairBatches([], 'a', 3), [])
  })
})
