// An in-process SSH server (ssh2, node-ssh's own engine) that answers each exec with what the test
// says, and ssh-keygen key pairs as an operator's are: for the SSH clients' tests without a host.
import { createRequire } from 'node:module'
import { readFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'

import { runProcessOk } from './process.js'

// ssh2 ships no types (node-ssh's own typings name it): the little the tests use, typed here.
interface Channel {
  write(text: string): void
  stderr: { write(text: string): void }
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

export interface KeyPair {
  /** "ssh-ed25519 BASE64", without a comment. */
  public: string
  private: string
  /** DIR/NAME, the private half's file. */
  path: string
}

/**
 * A new ed25519 key pair from ssh-keygen, written as DIR/NAME and DIR/NAME.pub. (ssh2's own
 * generateKeyPairSync('ed25519') strips a leading zero byte, so about one key in 256 does not parse.)
 */
export async function sshKeygen(dir: string, name: string): Promise<KeyPair> {
  const path = join(dir, name)
  await runProcessOk('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', '', '-f', path])
  const pub = await readFile(`${path}.pub`, 'utf8')
  return { public: pub.trim().split(/\s+/).slice(0, 2).join(' '), private: await readFile(path, 'utf8'), path }
}

/** What the server answers an exec with; `hang` never ends the channel. */
export type ExecAnswer = { code: number; stdout?: string; stderr?: string } | 'hang'

export interface TestSshServer {
  port: number
  /** Every command run, in order. */
  commands: string[]
  logins(): number
  close(): Promise<void>
}

/** Listens on 127.0.0.1, port 0, with HOST_KEY; accepts any public key and answers every exec with `answer`. */
export async function startSshServer(
  hostPrivateKey: string,
  answer: (command: string) => ExecAnswer,
): Promise<TestSshServer> {
  const commands: string[] = []
  let logins = 0
  const server = new Server({ hostKeys: [hostPrivateKey] }, (client) => {
    client.on('authentication', (ctx) => (ctx.method === 'publickey' ? ctx.accept() : ctx.reject(['publickey'])))
    client.on('ready', () => {
      logins += 1
      client.on('session', (accept) =>
        accept().on('exec', (acceptExec, _reject, info) => {
          commands.push(info.command)
          const channel = acceptExec()
          const reply = answer(info.command)
          if (reply === 'hang') return
          if (reply.stdout) channel.write(reply.stdout)
          if (reply.stderr) channel.stderr.write(reply.stderr)
          channel.exit(reply.code)
          channel.end()
        }),
      )
    })
    client.on('error', () => undefined)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: server.address().port,
    commands,
    logins: () => logins,
    close: () => new Promise<void>((resolve) => server.close(resolve)),
  }
}

/** A port nothing listens on (a server's, just closed). */
export async function closedPort(hostPrivateKey: string): Promise<number> {
  const server = await startSshServer(hostPrivateKey, () => ({ code: 0 }))
  await server.close()
  return server.port
}
