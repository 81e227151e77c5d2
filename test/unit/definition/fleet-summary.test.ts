import assert from 'node:assert/strict'

import { loadHostPolicy } from '../../../src/definition/host-policy.js'
import { loadDefinition } from '../../../src/definition/load.js'
import { formatPoolLines, summarize } from '../../../src/definition/validate-fleet.js'
import { packagePath } from '../../../src/package-root.js'

describe('the explanation of a valid fleet', () => {
  it('gives each pool its nodes by state and what its active and drained nodes reserve of its budget', async () => {
    const definition = await loadDefinition(packagePath('examples', 'fleet.yaml'))
    const summary = summarize(definition, loadHostPolicy(), { file: 'fleet.yaml', since: null })
    assert.deepEqual(summary.byPool.map((p) => p.pool), Object.keys(definition.pools))
    const build = summary.byPool.find((p) => p.pool === 'build')!
    assert.deepEqual(build.nodes, { active: 1, drained: 1, disabled: 1 })
    // The disabled node reserves nothing: two nodes' maxCapacity, not three.
    const reserving = definition.nodes.filter((n) => n.pool === 'build' && n.state !== 'disabled')
    assert.equal(build.reserved.cpu, reserving.reduce((sum, n) => sum + (n.maxCapacity?.cpu ?? 0), 0))
    // The pools add up to the fleet's totals.
    assert.equal(summary.byPool.reduce((sum, p) => sum + p.reserved.memoryMiB, 0), summary.capacity.reserved.memoryMiB)
    assert.equal(summary.byPool.reduce((sum, p) => sum + p.budget.diskGiB, 0), summary.capacity.budget.diskGiB)
  })

  it('prints a line per pool and names the canary', async () => {
    const definition = await loadDefinition(packagePath('examples', 'fleet.yaml'))
    const lines = formatPoolLines(summarize(definition, loadHostPolicy(), { file: 'fleet.yaml', since: null }))
    assert.equal(lines.length, Object.keys(definition.pools).length + 1)
    assert.match(lines.find((l) => l.includes('pool application'))!, /ingress 80\/443/)
    assert.equal(lines.at(-1), `  canary: ${definition.canary} proves a new revision before the rest`)
  })
})
