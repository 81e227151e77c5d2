// The stub's power actions (poweron, poweroff, shutdown, reboot, reset) and how an action waits for the machines
// behind the stub (--boot): the API's statuses and action names, `locked` while an action runs, and an action
// that ends in error when the machine's work failed. The machines here are promises the test settles.
import assert from 'node:assert/strict'

import { fixedClock } from '../../../src/config/clock.js'
import { type HetznerStub, startHetznerStub } from '../../../src/provider/hetzner-stub.js'
import type { StubMachines } from '../../../src/provider/stub-machines.js'

describe('provider: the stub’s server power actions', () => {
  const clock = fixedClock(new Date('2026-03-01T12:00:00Z'))
  let stub: HetznerStub

  async function call(method: string, path: string, body?: unknown) {
    const response = await fetch(`${stub.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${stub.token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON read field by field; the asserts check its shape
    return { status: response.status, body: (await response.json()) as Record<string, any> }
  }
  const createServer = (name = 'a') =>
    call('POST', '/servers', { name, server_type: 'cx22', image: 'debian-12', location: 'fsn1' })

  afterEach(async () => {
    await stub.close()
  })

  it('poweroff and shutdown leave the server off, poweron running; each action named as the API names it', async () => {
    stub = await startHetznerStub({ clock, actionDurationMs: 1000 })
    const id = (await createServer()).body.server.id as number
    clock.advance(1000)
    const commands: string[] = []
    for (const [verb, status] of [
      ['poweroff', 'off'],
      ['poweron', 'running'],
      ['shutdown', 'off'],
      ['poweron', 'running'],
      ['reboot', 'running'],
      ['reset', 'running'],
    ] as const) {
      const answer = await call('POST', `/servers/${id}/actions/${verb}`)
      assert.equal(answer.status, 201)
      commands.push(answer.body.action.command)
      // Locked while it runs.
      assert.equal((await call('POST', `/servers/${id}/actions/poweron`)).body.error.code, 'locked')
      clock.advance(1000)
      assert.equal((await call('GET', `/servers/${id}`)).body.server.status, status, verb)
    }
    assert.deepEqual(commands, [
      'stop_server',
      'start_server',
      'shutdown_server',
      'start_server',
      'reboot_server',
      'reset_server',
    ])
    assert.equal((await call('POST', '/servers/999/actions/poweroff')).status, 404)
  })

  it('with machines behind it, an action ends when the machine’s work has, in error when it failed', async () => {
    const works: { resolve: () => void; reject: (e: Error) => void }[] = []
    const pending = () =>
      new Promise<void>((resolve, reject) => {
        works.push({ resolve, reject })
      })
    const machines: StubMachines = {
      bootsImage: (name) => name === 'debian-12',
      createServer: () => ({ ipv4: '10.232.0.2', booted: pending() }),
      power: pending,
      deleteServer: pending,
      createVolume: pending,
      attachVolume: pending,
      detachVolume: pending,
      deleteVolume: () => Promise.resolve(),
      close: () => Promise.resolve(),
    }
    stub = await startHetznerStub({ clock, actionDurationMs: 1000, machines })
    const created = await createServer()
    assert.equal(created.body.server.public_net.ipv4.ip, '10.232.0.2')
    const createId = created.body.action.id as number
    clock.advance(5000)
    assert.equal((await call('GET', `/actions/${createId}`)).body.action.status, 'running', 'still booting')
    works.splice(0).forEach((w) => w.resolve())
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal((await call('GET', `/actions/${createId}`)).body.action.status, 'success')
    assert.equal((await call('GET', `/servers/${created.body.server.id}`)).body.server.status, 'running')

    const off = await call('POST', `/servers/${created.body.server.id}/actions/poweroff`)
    clock.advance(1000)
    works.splice(0).forEach((w) => w.reject(new Error('the machine did not stop')))
    await new Promise((resolve) => setImmediate(resolve))
    const action = (await call('GET', `/actions/${off.body.action.id}`)).body.action
    assert.equal(action.status, 'error')
    assert.deepEqual(action.error, { code: 'action_failed', message: 'the machine did not stop' })
    assert.equal((await call('GET', `/servers/${created.body.server.id}`)).body.server.status, 'running')

    const ubuntu = await call('POST', '/servers', { name: 'u', server_type: 'cx22', image: 'ubuntu-24.04' })
    assert.equal(ubuntu.body.error.code, 'invalid_input')
  })
})
