// A real OpenSSH sshd (not ssh2's server: that one answers exec only) for the tests that need SFTP as an
// operator's backup host serves it: on 127.0.0.1 and a port of its own, one host key, one authorised
// client key, the current user allowed in, `internal-sftp` as its SFTP subsystem.
import { mkdir, writeFile } from 'node:fs/promises'
import { connect } from 'node:net'
import { join } from 'node:path'

import { freePort } from './ports.js'
import { type RunningProcess, startProcess } from './process.js'
import { type KeyPair, sshKeygen } from './ssh-server.js'

export interface OpenSshServer {
  port: number
  /** The host key as a known_hosts line for 127.0.0.1 (`[127.0.0.1]:PORT ssh-ed25519 BASE64`). */
  knownHostsLine: string
  hostKey: KeyPair
  /** The key the server lets in; its private half's file is `clientKey.path`. */
  clientKey: KeyPair
  stop(): Promise<void>
  /** Starts it again on the same port and keys (after stop()). */
  start(): Promise<void>
}

/** sshd -D on a free port with keys made in `dir` (which must exist); stop() ends it. */
export async function startOpenSsh(dir: string): Promise<OpenSshServer> {
  const hostKey = await sshKeygen(dir, 'ssh_host_ed25519_key')
  const clientKey = await sshKeygen(dir, 'client_ed25519')
  const authorized = join(dir, 'authorized_keys')
  await writeFile(authorized, `${clientKey.public}\n`, { mode: 0o600 })
  const port = await freePort()
  const config = join(dir, 'sshd_config')
  await writeFile(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey.path}`,
      `AuthorizedKeysFile ${authorized}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PubkeyAuthentication yes',
      'PermitRootLogin prohibit-password',
      'UsePAM no',
      // The test's temp directories are not root-owned all the way up as StrictModes wants.
      'StrictModes no',
      'Subsystem sftp internal-sftp',
      'LogLevel ERROR',
      '',
    ].join('\n'),
    { mode: 0o600 },
  )
  // sshd refuses to start without its privilege separation directory (made by the package's unit at boot).
  await mkdir('/run/sshd', { recursive: true, mode: 0o755 })
  let sshd: RunningProcess | undefined
  const start = async () => {
    sshd = startProcess('/usr/sbin/sshd', ['-D', '-e', '-f', config], { keepChars: 4000 })
    const deadline = Date.now() + 10_000
    while (!(await listening(port))) {
      if (sshd.exit() || Date.now() > deadline) throw new Error(`sshd did not start: ${sshd.stderr()}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  await start()
  return {
    port,
    knownHostsLine: `[127.0.0.1]:${port} ${hostKey.public}`,
    hostKey,
    clientKey,
    stop: async () => {
      await sshd?.stop()
      sshd = undefined
    },
    start,
  }
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}
