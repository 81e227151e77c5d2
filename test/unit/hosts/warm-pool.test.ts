// The warm pool of role hosts: each suite gets a host nobody else took, and the next declared host
// boots while the current suite works (a fake starter stands in for systemd-nspawn).
import assert from 'node:assert/strict'

import type { ContainerHost } from '../../hosts/types.js'
import { WarmPool } from '../../hosts/warm-pool.js'

function fakeStarter() {
  const started: string[] = []
  const start = async (options: { name: string }) => {
    started.push(options.name)
    if (options.name === 'broken') throw new Error('boot failed')
    return { name: options.name } as unknown as ContainerHost
  }
  return { started, start }
}

describe('test hosts: the warm pool of role hosts', () => {
  it('gives each suite its own fresh host and boots the next declared one when a suite takes its host', async () => {
    const { started, start } = fakeStarter()
    const pool = new WarmPool(start)
    const tickets = ['brnf', 'dockernet', 'preflight'].map((name) => pool.declare({ name }))
    assert.deepEqual(started, [], 'declaring boots nothing')
    assert.equal((await pool.take(tickets[0]!)).name, 'brnf')
    assert.deepEqual(started, ['brnf', 'dockernet'], 'the next suite’s host boots while the first works')
    assert.equal((await pool.take(tickets[1]!)).name, 'dockernet')
    assert.deepEqual(started, ['brnf', 'dockernet', 'preflight'], 'a host booted ahead is not booted again')
    assert.equal((await pool.take(tickets[2]!)).name, 'preflight')
    assert.deepEqual(started, ['brnf', 'dockernet', 'preflight'], 'nothing boots after the last suite')
  })

  it('boots at most one host ahead, skips suites that took theirs, and refuses a ticket taken twice', async () => {
    const { started, start } = fakeStarter()
    const pool = new WarmPool(start)
    const [a, b, c] = ['a', 'b', 'c'].map((name) => pool.declare({ name }))
    await pool.take(b!)
    assert.deepEqual(started, ['b', 'c'])
    await pool.take(a!)
    assert.deepEqual(started, ['b', 'c', 'a'], 'a host nobody booted ahead starts when taken; c is already booting')
    assert.throws(() => pool.take(a!), /taken twice/)
    await pool.take(c!)
    assert.deepEqual(started, ['b', 'c', 'a'])
  })

  it('reports a failed boot ahead to the suite that takes the host', async () => {
    const { start } = fakeStarter()
    const pool = new WarmPool(start)
    const [first, broken] = [pool.declare({ name: 'first' }), pool.declare({ name: 'broken' })]
    await pool.take(first)
    await assert.rejects(pool.take(broken), /boot failed/)
  })
})
