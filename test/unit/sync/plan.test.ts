// The sync plan: targets and skipped nodes, the canary choice and hand-over, and a hash that moves
// with exactly what decides the run (definition, roles, revision, targets, tags).
import assert from 'node:assert/strict'
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { isFleetkitError } from '../../../src/checks/fleetkit-error.js'
import { packagePath } from '../../../src/package-root.js'
import { buildSyncPlan, nextCanary, type PlanInput } from '../../../src/sync/plan.js'
import { validDefinition } from '../../support/definition-fixture.js'

function input(overrides: Partial<PlanInput> = {}): PlanInput {
  const definition = validDefinition()
  definition.nodes.push(
    { id: 'build-2', pool: 'build', state: 'active', ssh: { host: '10.1.0.12', user: 'fleetkit' } },
    { id: 'build-3', pool: 'build', state: 'disabled' },
  )
  return { definition, definitionText: 'text', revision: 'a'.repeat(40), stateNodes: [], ...overrides }
}

describe('sync plan', () => {
  it('puts the declared canary first, skips disabled, parked, retired and lost nodes and lists why', () => {
    const base = input()
    const plan = buildSyncPlan({
      ...base,
      stateNodes: [
        { id: 'db-1', pool: 'database', status: 'parked' },
        { id: 'old-1', pool: 'build', status: 'retired' },
        { id: 'gone-1', pool: 'build', status: 'lost' },
        { id: 'build-2', pool: 'build', status: 'active' },
      ],
    })
    assert.deepEqual(
      plan.targets.map((t) => t.id),
      ['build-1', 'build-2'],
    )
    assert.equal(plan.canary, 'build-1')
    assert.deepEqual(plan.skipped, [
      { id: 'build-3', reason: 'disabled in the definition' },
      { id: 'db-1', reason: 'parked', action: 'fleetkit node unpark db-1' },
      { id: 'gone-1', reason: 'lost, silent since: bring it back, or replace it', action: 'fleetkit node show gone-1' },
      { id: 'old-1', reason: 'retired' },
    ])
  })

  it('a lost node that heartbeats again is skipped with node admit as its way back, never unpark', () => {
    const lostAt = new Date('2026-12-07T23:00:00Z')
    const plan = buildSyncPlan({
      ...input(),
      limit: ['back-1', 'gone-1'],
      stateNodes: [
        { id: 'back-1', pool: 'build', status: 'lost', lostAt, lastSeenAt: new Date('2026-12-07T23:05:00Z') },
        { id: 'gone-1', pool: 'build', status: 'lost', lostAt, lastSeenAt: new Date('2026-12-07T22:55:00Z') },
      ],
    })
    assert.deepEqual(plan.skipped, [
      { id: 'back-1', reason: 'lost, heartbeating again: admit it back first', action: 'fleetkit node admit back-1' },
      { id: 'gone-1', reason: 'lost, silent since: bring it back, or replace it', action: 'fleetkit node show gone-1' },
    ])
  })

  it('without a declared canary among the targets, the first target in id order goes first', () => {
    const plan = buildSyncPlan(input({ limit: ['db-1', 'build-2'] }))
    assert.equal(plan.canary, 'build-2')
    assert.equal(plan.limited, true)
    assert.deepEqual(
      plan.targets.map((t) => t.id),
      ['build-2', 'db-1'],
    )
  })

  it('a node pinning agentVersion gets it; the others get release.version', () => {
    const base = input()
    base.definition.nodes[0]!.agentVersion = '1.3.0'
    const plan = buildSyncPlan(base)
    assert.deepEqual(
      plan.targets.map((t) => [t.id, t.agentVersion]),
      [
        ['build-1', '1.3.0'],
        ['build-2', '1.2.3'],
        ['db-1', '1.2.3'],
      ],
    )
  })

  it('refuses a --limit naming no node with SYNC_TARGET_UNKNOWN', () => {
    assert.throws(() => buildSyncPlan(input({ limit: ['nope-1'] })), { code: 'SYNC_TARGET_UNKNOWN' })
  })

  it('refuses --tags naming no role of site.yml (nothing would run, every node reported converged)', () => {
    assert.throws(
      () => buildSyncPlan(input({ tags: ['firewall', 'bogus'] })),
      (error: unknown) => {
        const e = error as { code?: string; message?: string; data?: { unknown?: string[]; roles?: string[] } }
        assert.equal(e.code, 'USAGE_INVALID')
        assert.deepEqual(e.data?.unknown, ['bogus'])
        assert.ok(e.data?.roles?.includes('firewall') && e.data.roles.includes('agent'), String(e.data?.roles))
        return true
      },
    )
    for (const tag of ['preflight', 'firewall', 'sshd', 'agent_update', 'agent'])
      assert.deepEqual(buildSyncPlan(input({ tags: [tag] })).tags, [tag])
  })

  it('the hash is stable for the same inputs and moves with the definition, the revision, the targets, the tags and the extra vars', () => {
    const hash = buildSyncPlan(input()).hash
    assert.equal(buildSyncPlan(input()).hash, hash)
    assert.notEqual(buildSyncPlan(input({ definitionText: 'text2' })).hash, hash)
    assert.notEqual(buildSyncPlan(input({ revision: 'b'.repeat(40) })).hash, hash)
    assert.notEqual(buildSyncPlan(input({ limit: ['build-1'] })).hash, hash)
    assert.notEqual(buildSyncPlan(input({ tags: ['firewall'] })).hash, hash)
    assert.notEqual(buildSyncPlan(input({ extraVarsSha256: 'c'.repeat(64) })).hash, hash)
    // The content hash ignores the revision: the same file at another commit converges the same.
    assert.equal(buildSyncPlan(input({ revision: 'b'.repeat(40) })).contentHash, buildSyncPlan(input()).contentHash)
  })

  it('the hash moves when a role file changes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetkit-plan-'))
    try {
      cpSync(packagePath('ansible'), join(dir, 'ansible'), { recursive: true })
      const before = buildSyncPlan(input({ ansibleDir: join(dir, 'ansible') }))
      assert.equal(before.rolesSha256, buildSyncPlan(input()).rolesSha256)
      writeFileSync(join(dir, 'ansible', 'roles', 'firewall', 'defaults', 'main.yml'), '\n# edited\n', { flag: 'a' })
      const after = buildSyncPlan(input({ ansibleDir: join(dir, 'ansible') }))
      assert.notEqual(after.rolesSha256, before.rolesSha256)
      assert.notEqual(after.hash, before.hash)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('a node of a pool with a provider without a server address or ssh.host is skipped, naming node provision', () => {
    const base = input()
    base.definition.nodes.push(
      { id: 'build-4', pool: 'build', state: 'active', ssh: { user: 'fleetkit' } },
      { id: 'build-5', pool: 'build', state: 'active', ssh: { user: 'fleetkit' } },
      { id: 'build-6', pool: 'build', state: 'active', ssh: { user: 'fleetkit' } },
    )
    const plan = buildSyncPlan({
      ...base,
      stateNodes: [
        // Mid-provisioning: the server is asked for, its address not recorded yet.
        {
          id: 'build-5',
          pool: 'build',
          status: 'provisioning',
          provisionState: 'server_requested',
          provider: 'hetzner',
        },
        // Provisioned: reached at its server's address, fleet.yaml without ssh.host.
        {
          id: 'build-6',
          pool: 'build',
          status: 'active',
          provisionState: 'enrolled',
          provider: 'hetzner',
          providerServerId: '1006',
          publicIpv4: '198.18.3.6',
        },
      ],
    })
    assert.deepEqual(
      plan.targets.map((t) => t.id),
      ['build-1', 'build-2', 'build-6', 'db-1'],
    )
    assert.deepEqual(plan.skipped, [
      { id: 'build-3', reason: 'disabled in the definition' },
      {
        id: 'build-4',
        reason: 'not provisioned yet (a pool with a provider, no ssh.host): fleetkit node provision build-4',
        action: 'fleetkit node provision build-4',
      },
      {
        id: 'build-5',
        reason: 'provisioning (step server_requested), no server address yet: fleetkit node provision --resume build-5',
        action: 'fleetkit node provision --resume build-5',
      },
    ])
  })

  it('an ssh.host that disagrees with the provisioned server refuses the plan, whether or not --limit names the node', () => {
    const base = input()
    const row = {
      id: 'build-2',
      pool: 'build',
      status: 'active',
      provider: 'hetzner',
      providerServerId: '1004',
      publicIpv4: '198.18.3.236',
    }
    for (const limit of [undefined, ['db-1']]) {
      let thrown: unknown
      try {
        buildSyncPlan({ ...base, stateNodes: [row], ...(limit ? { limit } : {}) })
      } catch (error) {
        thrown = error
      }
      assert.ok(isFleetkitError(thrown), String(thrown))
      assert.equal(thrown.code, 'NODE_ADDRESS_DISAGREES')
      assert.deepEqual(thrown.data, {
        node: 'build-2',
        declared: '10.1.0.12',
        provisioned: '198.18.3.236',
        serverId: '1004',
      })
    }
    // A parked node is out of the inventory: its address is not read.
    assert.doesNotThrow(() => buildSyncPlan({ ...base, stateNodes: [{ ...row, status: 'parked' }] }))
  })

  it('an unreachable canary is handed to the next untried node of its own pool only', () => {
    const plan = buildSyncPlan(input())
    assert.equal(nextCanary(plan, 'build', new Set(['build-1']))?.id, 'build-2')
    assert.equal(nextCanary(plan, 'build', new Set(['build-1', 'build-2'])), null)
    assert.equal(nextCanary(plan, 'database', new Set())?.id, 'db-1')
  })
})
