// `node decommission`'s agent stop over SSH (src/sync/agent-stop.ts) against an in-process SSH server:
// `systemctl disable --now` through sudo with the pinned host key, and every way a host can fail to
// stop it reported with its reason, never thrown.
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { stopAgentOverSsh, stopNodeAgent } from '../../../src/sync/agent-stop.js'
import { type SshTarget, SshUnreachable } from '../../../src/sync/ssh-client.js'
import { type ExecAnswer, type TestSshServer, closedPort, sshKeygen, startSshServer } from '../../support/ssh-server.js'

describe('sync: stopping an agent over SSH (node decommission)', () => {
  let dir: string
  let server: TestSshServer
  let hostKey: { public: string; private: string }
  let other: string
  let answer: (command: string) => ExecAnswer = () => ({ code: 0 })
  const env = () => ({ ANSIBLE_PRIVATE_KEY_FILE: join(dir, 'id'), HOME: dir })
  const target = (overrides: Partial<SshTarget> = {}): SshTarget => ({
    node: 'web-1',
    host: '127.0.0.1',
    port: server.port,
    user: 'ops',
    pinnedKey: hostKey.public,
    ...overrides,
  })

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-agent-stop-'))
    hostKey = await sshKeygen(dir, 'host')
    other = (await sshKeygen(dir, 'other')).public
    await sshKeygen(dir, 'id')
    server = await startSshServer(hostKey.private, (command) => answer(command))
  })
  after(async () => {
    await server?.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('runs systemctl disable --now of the agent unit through sudo -n, on the host with the pinned key', async () => {
    answer = () => ({
      code: 0,
      stderr: 'Removed "/etc/systemd/system/multi-user.target.wants/fleetkit-agent.service".\n',
    })
    const before = server.commands.length
    const stop = await stopAgentOverSsh(target(), env())
    assert.deepEqual(stop, { state: 'stopped', detail: 'fleetkit-agent.service disabled and stopped on web-1' })
    assert.deepEqual(server.commands.slice(before), ['sudo -n systemctl disable --now fleetkit-agent.service'])
    // As root, no sudo.
    await stopAgentOverSsh(target({ user: 'root' }), env())
    assert.equal(server.commands.at(-1), 'systemctl disable --now fleetkit-agent.service')
  })

  it('a host without the unit is absent; a refusing sudo is command_failed, with its words made printable', async () => {
    answer = () => ({ code: 1, stderr: 'Failed to disable unit: Unit file fleetkit-agent.service does not exist.\n' })
    assert.equal((await stopAgentOverSsh(target(), env())).state, 'absent')
    answer = () => ({ code: 1, stderr: 'sudo: a password is required\u001b[2J\n' })
    const refused = await stopAgentOverSsh(target(), env())
    assert.equal(refused.state, 'not_stopped')
    assert.equal(refused.reason, 'command_failed')
    assert.match(refused.detail, /exited 1: sudo: a password is required$/)
  })

  it('never logs in to a host with another key or nothing pinned, and reports an unreachable one', async () => {
    const logins = server.logins()
    const mismatch = await stopAgentOverSsh(target({ pinnedKey: other }), env())
    assert.deepEqual([mismatch.state, mismatch.reason], ['not_stopped', 'host_key_mismatch'])
    const unpinned = await stopAgentOverSsh(target({ pinnedKey: null, port: 1 }), env())
    assert.deepEqual([unpinned.state, unpinned.reason], ['not_stopped', 'host_key_not_pinned'])
    assert.equal(server.logins(), logins, 'no login')
    const away = await stopAgentOverSsh(target({ port: await closedPort(hostKey.private) }), env())
    assert.deepEqual([away.state, away.reason], ['not_stopped', 'unreachable'])
    assert.match(away.detail, /^web-1 is unreachable \(127\.0\.0\.1:\d+: /)
  })

  it('gives up on a host whose systemctl never answers (timed_out), closing the session', async () => {
    answer = () => 'hang'
    const stop = await stopAgentOverSsh(target(), env(), { timeoutMs: 300 })
    assert.deepEqual([stop.state, stop.reason], ['not_stopped', 'timed_out'])
  })

  it("dials a node as sync does: its declaration's ssh block first, else the state's address as root", async () => {
    answer = () => ({ code: 0 })
    const node = {
      id: 'web-1',
      pool: 'web',
      sshHost: '127.0.0.1',
      hostKeyPublic: `${hostKey.public} web-1`,
      provider: null,
      providerServerId: null,
      publicIpv4: null,
      publicIpv6: null,
    }
    const declared = [
      {
        id: 'web-1',
        pool: 'web',
        state: 'active' as const,
        ssh: { host: '127.0.0.1', user: 'ops', port: server.port },
      },
    ]
    assert.equal((await stopNodeAgent({ nodes: declared, pools: {} }, node, env())).state, 'stopped')
    assert.equal(server.commands.at(-1), 'sudo -n systemctl disable --now fleetkit-agent.service')
    // Undeclared: the state's address on port 22 as root, which nothing answers here.
    const fromState = await stopNodeAgent({ nodes: [], pools: {} }, { ...node, sshHost: '127.0.0.1' }, env(), {
      open: (t) => {
        assert.deepEqual([t.host, t.port, t.user, t.pinnedKey], ['127.0.0.1', 22, 'root', hostKey.public])
        throw new SshUnreachable(t.node, 'refused')
      },
    })
    assert.deepEqual([fromState.state, fromState.reason], ['not_stopped', 'unreachable'])
    // A provisioned server at one address and fleet.yaml naming another: which host is the node? Neither is dialled.
    const provisioned = { ...node, provider: 'hetzner', providerServerId: '42', publicIpv4: '198.18.0.7' }
    const disagreeing = await stopNodeAgent({ nodes: declared, pools: {} }, provisioned, env(), {
      open: () => assert.fail('dialled a node whose address is in dispute'),
    })
    assert.deepEqual([disagreeing.state, disagreeing.reason], ['not_stopped', 'address_disagrees'])
    assert.match(disagreeing.detail, /198\.18\.0\.7/)
  })
})
