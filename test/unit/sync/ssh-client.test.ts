// sync's node-ssh client against an in-process SSH server (test/support/ssh-server.ts): the pinned host
// key is the host verifier, so another key is SSH_HOST_KEY_MISMATCH and no key SSH_HOST_KEY_NOT_PINNED.
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { isFleetkitError } from '../../../src/checks/fleetkit-error.js'
import { checkPinnedHostKey, openPinned, type SshTarget, SshUnreachable } from '../../../src/sync/ssh-client.js'
import { fingerprintProgram } from '../../../src/sync/fingerprint-probe.js'
import { type TestSshServer, closedPort, sshKeygen, startSshServer } from '../../support/ssh-server.js'

describe('sync SSH client (node-ssh, pinned host key)', () => {
  let dir: string
  let server: TestSshServer
  let hostKey: string
  let hostPrivate: string
  let other: string
  const env = () => ({ ANSIBLE_PRIVATE_KEY_FILE: join(dir, 'id'), HOME: dir })
  const target = (pinnedKey: string | null): SshTarget => ({
    node: 'web-1',
    host: '127.0.0.1',
    port: server.port,
    user: 'ops',
    pinnedKey,
  })

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-ssh-client-'))
    const host = await sshKeygen(dir, 'host')
    hostKey = host.public
    hostPrivate = host.private
    other = (await sshKeygen(dir, 'other')).public
    await sshKeygen(dir, 'id')
    server = await startSshServer(host.private, (command) => ({ code: 0, stdout: `ran: ${command}\n` }))
  })

  after(async () => {
    await server.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('logs in and runs a command when the host presents the pinned key', async () => {
    const session = await openPinned(target(`${hostKey} comment`), env())
    try {
      assert.equal(session.asRoot, 'sudo -n ')
      const result = await session.exec('true')
      assert.deepEqual(result, { code: 0, stdout: 'ran: true', stderr: '' })
    } finally {
      session.close()
    }
    assert.equal(await checkPinnedHostKey(target(hostKey), env()), null)
  })

  it('refuses another key with SSH_HOST_KEY_MISMATCH, before logging in', async () => {
    const before = server.logins()
    const error = await checkPinnedHostKey(target(other), env())
    assert.ok(error && isFleetkitError(error), String(error))
    assert.equal(error.code, 'SSH_HOST_KEY_MISMATCH')
    assert.match(error.message, /node web-1 answered with an SSH host key other than the pinned one/)
    assert.equal(server.logins(), before, 'no login with a refused key')
  })

  it('refuses a node with nothing pinned with SSH_HOST_KEY_NOT_PINNED, without dialling', async () => {
    const error = await checkPinnedHostKey({ ...target(null), port: 1 }, env())
    assert.equal(error?.code, 'SSH_HOST_KEY_NOT_PINNED')
    assert.match(error.message, /node web-1 has no pinned SSH host key/)
  })

  it('a host that does not answer is unreachable (left to the phases), not a key refusal', async () => {
    const freePort = await closedPort(hostPrivate)
    await assert.rejects(openPinned({ ...target(hostKey), port: freePort }, env()), SshUnreachable)
    assert.equal(await checkPinnedHostKey({ ...target(hostKey), port: freePort }, env()), null)
  })

  it("the fingerprint probe is the module's own Python with the resources as a JSON string literal", () => {
    const program = fingerprintProgram([{ kind: 'path', name: "/etc/x'); import os; os.system('id" }])
    assert.match(program, /^direct\(json\.loads\(".*"\)\)$/m)
    assert.doesNotMatch(program, /^ {4}main\(\)$/m)
    assert.match(program, /"kind\\":\\"nft\\",\\"name\\":\\"inet fleetkit\\"/)
  })
})
