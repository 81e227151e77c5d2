import assert from 'node:assert/strict'

import { loadHostPolicy } from '../../../src/definition/host-policy.js'
import { checkTransitions } from '../../../src/definition/transitions/check-transitions.js'
import { NO_STATE_FACTS, type TransitionFacts } from '../../../src/definition/transitions/facts.js'
import type { Definition } from '../../../src/definition/types.js'
import { validDefinition } from '../../support/definition-fixture.js'

/** Facts from plain maps, so each test states the state it assumes. */
function facts(
  state: { allocations?: Record<string, number>; leases?: Record<string, number>; proven?: string[] } = {},
): TransitionFacts {
  return {
    activeAllocations: async (id) => state.allocations?.[id] ?? 0,
    liveLeases: async (id) => state.leases?.[id] ?? 0,
    canaryProven: async (kind, value) => (state.proven ?? []).includes(`${kind}:${value}`),
  }
}

const check = async (previous: Definition, current: Definition, f: TransitionFacts = NO_STATE_FACTS) =>
  (await checkTransitions(previous, current, f, loadHostPolicy())).map((e) => [e.code, e.path, e.check])

describe('transitions (definition:transition)', () => {
  it('an unchanged definition is a safe change', async () => {
    assert.deepEqual(await check(validDefinition(), validDefinition(), facts({ allocations: { 'build-1': 3 } })), [])
  })

  describe('removing a node (TRANSITION_NODE_REMOVAL_UNSAFE)', () => {
    it('is safe when the node holds nothing', async () => {
      const current = validDefinition()
      current.nodes.splice(1, 1)
      assert.deepEqual(await check(validDefinition(), current, facts({ allocations: { 'build-1': 2 } })), [])
    })
    it('is refused while the node holds allocations or live leases', async () => {
      const current = validDefinition()
      current.nodes.splice(1, 1)
      for (const state of [{ allocations: { 'db-1': 1 } }, { leases: { 'db-1': 2 } }]) {
        const errors = await checkTransitions(validDefinition(), current, facts(state), loadHostPolicy())
        assert.deepEqual(
          errors.map((e) => [e.code, e.path]),
          [['TRANSITION_NODE_REMOVAL_UNSAFE', '/nodes']],
        )
        assert.match(errors[0]!.message, /node "db-1" was removed but still holds/)
      }
    })
  })

  describe('shrinking a budget (TRANSITION_BUDGET_SHRINK_UNSAFE)', () => {
    it('is safe down to what the nodes reserve', async () => {
      const current = validDefinition()
      current.pools.build!.capacityBudget = { cpu: 3.5, memoryMiB: 7168, diskGiB: 60 } // build-1 reserves exactly this
      assert.deepEqual(await check(validDefinition(), current), [])
    })
    it('counts a node disabled in the same change while it still holds work', async () => {
      const previous = validDefinition()
      previous.nodes.push({
        id: 'build-2',
        pool: 'build',
        state: 'active',
        maxCapacity: { cpu: 3.5, memoryMiB: 7168, diskGiB: 60 },
      })
      const current = validDefinition()
      current.nodes.push({
        id: 'build-2',
        pool: 'build',
        state: 'disabled',
        maxCapacity: { cpu: 3.5, memoryMiB: 7168, diskGiB: 60 },
      })
      current.pools.build!.capacityBudget = { cpu: 3.5, memoryMiB: 7168, diskGiB: 60 }
      assert.deepEqual(await check(previous, current, facts({ leases: { 'build-2': 1 } })), [
        ['TRANSITION_BUDGET_SHRINK_UNSAFE', '/pools/build/capacityBudget', 'definition:transition'],
      ])
      // Once build-2 is empty the same change is safe.
      assert.deepEqual(await check(previous, current, facts()), [])
    })
  })

  describe('enabling a disabled node (TRANSITION_ENABLE_WITHOUT_CAPACITY)', () => {
    const withBuild2 = (state: 'active' | 'disabled', cpu?: number): Definition => {
      const d = validDefinition()
      d.nodes.push({
        id: 'build-2',
        pool: 'build',
        state,
        ...(cpu === undefined ? {} : { maxCapacity: { cpu, memoryMiB: 4096, diskGiB: 40 } }),
      })
      return d
    }
    it('is safe when the pool has room for it', async () => {
      assert.deepEqual(await check(withBuild2('disabled', 4), withBuild2('active', 4)), [])
    })
    it('is refused when the pool budget has no room', async () => {
      assert.deepEqual(await check(withBuild2('disabled', 6), withBuild2('active', 6)), [
        ['TRANSITION_ENABLE_WITHOUT_CAPACITY', '/nodes/2/state', 'definition:transition'],
      ])
    })
    it('is refused when the node has no size at all', async () => {
      const previous = withBuild2('disabled')
      const current = withBuild2('active')
      for (const d of [previous, current]) delete d.pools.build!.serverType
      assert.deepEqual(await check(previous, current), [
        ['TRANSITION_ENABLE_WITHOUT_CAPACITY', '/nodes/2/state', 'definition:transition'],
      ])
    })
  })

  describe('new image or agent version (TRANSITION_UNPROVEN)', () => {
    const changed = (): Definition => {
      const d = validDefinition()
      d.release.version = '1.3.0'
      d.pools.build!.image = 'ubuntu-26.04'
      return d
    }
    it('is refused without a recorded canary run of that revision', async () => {
      assert.deepEqual(await check(validDefinition(), changed()), [
        ['TRANSITION_UNPROVEN', '/release/version', 'definition:transition'],
        ['TRANSITION_UNPROVEN', '/pools/build/image', 'definition:transition'],
      ])
      assert.deepEqual(
        await check(validDefinition(), changed(), facts({ proven: ['agentVersion:1.3.0', 'image:ubuntu-24.04'] })),
        [['TRANSITION_UNPROVEN', '/pools/build/image', 'definition:transition']],
      )
    })
    it('is safe once the canary proved exactly these revisions', async () => {
      assert.deepEqual(
        await check(validDefinition(), changed(), facts({ proven: ['agentVersion:1.3.0', 'image:ubuntu-26.04'] })),
        [],
      )
    })
  })
})
