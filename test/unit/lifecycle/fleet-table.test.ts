// node list's PROVISION cell and node show's provisioning line: a run that a decommission ended
// before the node enrolled must not look as if it still waited for the enrollment.
import assert from 'node:assert/strict'

import { describeProvision, provisionCell } from '../../../src/lifecycle/view/fleet-table.js'
import type { NodeListResult } from '../../../src/lifecycle/view/fleet-view.js'

type NodeSummary = NodeListResult['nodes'][number]
const node = (status: string, provisionState: string | null) =>
  ({ status, provisionState, serverId: provisionState === null ? null : 4711, volume: null }) as unknown as NodeSummary

describe('node list: the PROVISION cell', () => {
  it('a retired node decommissioned before it enrolled shows ended:STEP, node show says so in words', () => {
    for (const step of ['pending', 'server_requested', 'awaiting_enrollment']) {
      assert.equal(provisionCell(node('retired', step)), `ended:${step}`)
      assert.equal(
        describeProvision(node('retired', step)),
        `ended at ${step} (retired before it enrolled), server 4711`,
      )
    }
  })

  it('a live run, a finished one and a node fleetkit did not provision show the recorded step', () => {
    assert.equal(provisionCell(node('provisioning', 'awaiting_enrollment')), 'awaiting_enrollment')
    assert.equal(provisionCell(node('retired', 'enrolled')), 'enrolled')
    assert.equal(provisionCell(node('failed', 'failed')), 'failed')
    assert.equal(provisionCell(node('retired', null)), '-')
    assert.equal(describeProvision(node('active', 'enrolled')), 'enrolled, server 4711')
  })
})
