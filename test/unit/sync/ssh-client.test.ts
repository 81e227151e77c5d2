// sync's node-ssh client against an in-process SSH server (ssh2, node-ssh's own engine): the pinned host
// key is the host verifier, so another key is SSH_HOST_KEY_MISMATCH and no key SSH_HOST_KEY_NOT_PINNED.
// The keys come from OpenSSH's ssh-keygen, as an operator's do: ssh2's own generateKeyPairSync('ed25519')
// strips a leading zero byte from the public half, so about one key in 256 does not parse (mscdex/ssh2#1513).
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { isFleetkitError } from '../../../src/checks/fleetkit-error.js'
import { checkPinnedHostKey, openPinned, type SshTarget, SshUnreachable } from '../../../src/sync/ssh-client.js'
import { fingerprintProgram } from '../../../src/sync/fingerprint-probe.js'
import { runProcessOk } from '../../support/process.js'

// ssh2 ships no types (node-ssh's own typings name it): the little the test uses, typed here.
interface Channel {
  write(text: string): void
  exit(code: number): void
  end(): void
}
interface ServerClient {
  on(
    event: 'authentication',
    handler: (ctx: { method: string; accept(): void; reject(methods: string[]): void }) => void,
  ): void
  on(event: 'ready', handler: () => void): void
  on(event: 'error', handler: () => void): void
  on(
    event: 'session',
    handler: (
      accept: () => {
        on(event: 'exec', handler: (accept: () => Channel, reject: () => void, info: { command: string }) => void): void
      },
    ) => void,
  ): void
}
interface SshServer {
  listen(port: number, host: string, done: () => void): void
  address(): AddressInfo
  close(done: () => void): void
}
const { Server } = createRequire(import.meta.url)('ssh2') as {
  Server: new (config: { hostKeys: string[] }, onClient: (client: ServerClient) => void) => SshServer
}

interface KeyPair {
  /** "ssh-ed25519 BASE64", without a comment. */
  public: string
  private: string
}

/** A new ed25519 key pair from ssh-keygen, written as DIR/NAME and DIR/NAME.pub. */
async function sshKeygen(dir: string, name: string): Promise<KeyPair> {
  const path = join(dir, name)
  await runProcessOk('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', '', '-f', path])
  const pub = await readFile(`${path}.pub`, 'utf8')
  return { public: pub.trim().split(/\s+/).slice(0, 2).join(' '), private: await readFile(path, 'utf8') }
}

describe('sync SSH client (node-ssh, pinned host key)', () => {
  let dir: string
  let server: SshServer
  let port: number
  let hostKey: string
  let other: string
  const env = () => ({ ANSIBLE_PRIVATE_KEY_FILE: join(dir, 'id'), HOME: dir })
  const target = (pinnedKey: string | null): SshTarget => ({
    node: 'web-1',
    host: '127.0.0.1',
    port,
    user: 'ops',
    pinnedKey,
  })
  let logins = 0

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-ssh-client-'))
    const host = await sshKeygen(dir, 'host')
    hostKey = host.public
    other = (await sshKeygen(dir, 'other')).public
    await sshKeygen(dir, 'id')
    server = new Server({ hostKeys: [host.private] }, (client) => {
      client.on('authentication', (ctx) => (ctx.method === 'publickey' ? ctx.accept() : ctx.reject(['publickey'])))
      client.on('ready', () => {
        logins += 1
        client.on('session', (accept) =>
          accept().on('exec', (acceptExec, _reject, info) => {
            const channel = acceptExec()
            channel.write(`ran: ${info.command}\n`)
            channel.exit(0)
            channel.end()
          }),
        )
      })
      client.on('error', () => undefined)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = server.address().port
  })

  after(async () => {
    await new Promise<void>((resolve) => server.close(resolve))
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
    const before = logins
    const error = await checkPinnedHostKey(target(other), env())
    assert.ok(error && isFleetkitError(error), String(error))
    assert.equal(error.code, 'SSH_HOST_KEY_MISMATCH')
    assert.match(error.message, /node web-1 answered with an SSH host key other than the pinned one/)
    assert.equal(logins, before, 'no login with a refused key')
  })

  it('refuses a node with nothing pinned with SSH_HOST_KEY_NOT_PINNED, without dialling', async () => {
    const error = await checkPinnedHostKey({ ...target(null), port: 1 }, env())
    assert.equal(error?.code, 'SSH_HOST_KEY_NOT_PINNED')
    assert.match(error.message, /node web-1 has no pinned SSH host key/)
  })

  it('a host that does not answer is unreachable (left to the phases), not a key refusal', async () => {
    const closed = new Server({ hostKeys: [(await sshKeygen(dir, 'closed')).private] }, () => undefined)
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const freePort = closed.address().port
    await new Promise<void>((resolve) => closed.close(resolve))
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
