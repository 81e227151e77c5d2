// The explanation of a valid fleet, checked against figures worked out by hand for a small
// fleet and a policy declared here (never by calling the capacity helpers under test).
import assert from 'node:assert/strict'

import type { HostPolicy } from '../../../src/definition/host-policy.js'
import type { Definition } from '../../../src/definition/types.js'
import { formatPoolLines, summarize } from '../../../src/definition/validate-fleet.js'
import { validDefinition } from '../../support/definition-fixture.js'

/** A policy with round numbers, so the arithmetic below can be checked by eye. */
const POLICY: HostPolicy = {
  version: 1,
  sizing: { minimum: { cpu: 2, memoryMiB: 2048, rootDiskMiB: 20480 } },
  reserve: { cpu: 0.5, memoryMiB: 1024, diskGiB: 10 },
  releases: [{ id: 'ubuntu', version: '24.04', codename: 'noble' }],
  architectures: ['amd64'],
  serverTypes: {
    hetzner: {
      cx22: { cores: 2, memoryMiB: 4096, diskGiB: 40, architecture: 'amd64' },
      cx32: { cores: 4, memoryMiB: 8192, diskGiB: 80, architecture: 'amd64' },
    },
  },
}

/**
 * pool build (cx32, budget cpu 8 / 16384 MiB / 200 GiB):
 *   build-1 active,   maxCapacity 3.5 / 7168 / 60
 *   build-2 drained,  no maxCapacity: cx32 minus this policy's reserve = 3.5 / 7168 / 70
 *   build-3 disabled, maxCapacity 8 / 16384 / 160 (reserves nothing)
 * pool database (cx22, budget cpu 4 / 8192 MiB / 100 GiB):
 *   db-1 active, maxCapacity 1.5 / 3072 / 20
 */
function smallFleet(): Definition {
  const definition = validDefinition()
  const [build1, db1] = [
    definition.nodes.find((n) => n.id === 'build-1')!,
    definition.nodes.find((n) => n.id === 'db-1')!,
  ]
  const { maxCapacity: _, ...build2 } = { ...build1, id: 'build-2', state: 'drained' as const }
  const build3 = {
    ...build1,
    id: 'build-3',
    state: 'disabled' as const,
    maxCapacity: { cpu: 8, memoryMiB: 16384, diskGiB: 160 },
  }
  definition.nodes = [build1, build2, build3, db1]
  return definition
}

const extra = { file: 'fleet.yaml', example: false, since: null }

describe('the explanation of a valid fleet', () => {
  it("counts each pool's nodes by state and what its active and drained nodes reserve of its budget", () => {
    const summary = summarize(smallFleet(), POLICY, extra)
    assert.deepEqual(
      summary.byPool.map((p) => ({ pool: p.pool, nodes: p.nodes, reserved: p.reserved, budget: p.budget })),
      [
        // 3.5 + 3.5 = 7 cpu, 7168 + 7168 = 14336 MiB, 60 + 70 = 130 GiB; build-3 (disabled) adds nothing.
        {
          pool: 'build',
          nodes: { active: 1, drained: 1, disabled: 1 },
          reserved: { cpu: 7, memoryMiB: 14336, diskGiB: 130 },
          budget: { cpu: 8, memoryMiB: 16384, diskGiB: 200 },
        },
        {
          pool: 'database',
          nodes: { active: 1, drained: 0, disabled: 0 },
          reserved: { cpu: 1.5, memoryMiB: 3072, diskGiB: 20 },
          budget: { cpu: 4, memoryMiB: 8192, diskGiB: 100 },
        },
      ],
    )
  })

  it("adds the pools up to the fleet's totals", () => {
    const summary = summarize(smallFleet(), POLICY, extra)
    assert.deepEqual(summary.nodes, { total: 4, active: 2, drained: 1, disabled: 1 })
    assert.deepEqual(summary.capacity, {
      budget: { cpu: 12, memoryMiB: 24576, diskGiB: 300 },
      reserved: { cpu: 8.5, memoryMiB: 17408, diskGiB: 150 },
    })
  })

  it('prints a line per pool, then the canary', () => {
    const lines = formatPoolLines(summarize(smallFleet(), POLICY, extra))
    assert.deepEqual(lines, [
      '  pool build (role build, cx32): 1 active, 1 drained, 1 disabled; reserves cpu 7/8, memory 14336/16384 MiB, disk 130/200 GiB; ' +
        'containers on /24 networks from 10.210.0.0/16',
      '  pool database (role database, cx22): 1 active, 0 drained, 0 disabled; reserves cpu 1.5/4, memory 3072/8192 MiB, disk 20/100 GiB',
      '  canary: build-1 proves a new revision before the rest',
    ])
  })

  it('says so when no canary is declared, and names ingress, stateful and regions', () => {
    const definition = smallFleet()
    delete definition.canary
    definition.pools.database = {
      ...definition.pools.database!,
      ingress: true,
      stateful: true,
      regions: ['fsn1', 'nbg1'],
    }
    const lines = formatPoolLines(summarize(definition, POLICY, extra))
    assert.equal(
      lines[1],
      '  pool database (role database, ingress 80/443, stateful, cx22 in fsn1/nbg1): 1 active, 0 drained, 0 disabled; ' +
        'reserves cpu 1.5/4, memory 3072/8192 MiB, disk 20/100 GiB',
    )
    assert.equal(lines.at(-1), '  canary: none declared (sync picks the first reachable node)')
  })
})
