// The direct SSH steps of `fleetkit sync` (no role needed): node-ssh with the node's pinned host key as
// its host verifier, so a host whose key is not the pinned one is refused before anything is sent to it.
import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

import type { NodeSSH } from 'node-ssh'

import { FleetkitError } from '../checks/fleetkit-error.js'
import type { Env } from '../config/state-dir.js'

/** Where and as whom a node is reached, and the host key it must present (sshTargets() builds these). */
export interface SshTarget {
  node: string
  host: string
  port: number
  user: string
  /** "TYPE BASE64" of the pinned host key; null when neither fleet.yaml nor the state pins one. */
  pinnedKey: string | null
}

/** A host that did not answer (or refused our login): the same as Ansible's "unreachable". */
export class SshUnreachable extends Error {
  constructor(
    readonly node: string,
    message: string,
  ) {
    super(message)
    this.name = 'SshUnreachable'
  }
}

interface CommandResult {
  code: number | null
  stdout: string
  stderr: string
}

export interface PinnedSession {
  /** The target's user, or "sudo -n " before a command that needs root when the user is not root. */
  readonly asRoot: string
  exec(command: string, stdin?: string): Promise<CommandResult>
  /** Writes `content` to `path` over SFTP, created with `mode` (never through a command line). */
  writeFile(path: string, content: string, mode: number): Promise<void>
  close(): void
}

/** The host key algorithms that present a key of the pinned type: the host is asked for that one only. */
function hostKeyAlgorithms(keyType: string): string[] {
  return keyType === 'ssh-rsa' ? ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'] : [keyType]
}

/** The verifier node-ssh calls with the key the host presents (its raw blob): true only for the pinned key. */
function pinnedKeyVerifier(pinnedKey: string): (presented: Buffer) => boolean {
  const blob = Buffer.from(pinnedKey.trim().split(/\s+/)[1] ?? '', 'base64')
  return (presented) => blob.length > 0 && Buffer.isBuffer(presented) && presented.equals(blob)
}

function notPinnedError(node: string): FleetkitError {
  return new FleetkitError(
    'SSH_HOST_KEY_NOT_PINNED',
    `node ${node} has no pinned SSH host key (no hostKey in fleet.yaml, none from a seed in the state): fleetkit does not log in to a host it cannot identify`,
    {
      actions: [
        `fleetkit seed ${node} --kind worker   (a host not booted yet: boot it from this seed, which pins its key)`,
        `put the host's key (from its provider console or its seed) as hostKey of ${node} in fleet.yaml`,
      ],
      data: { node },
    },
  )
}

function mismatchError(node: string): FleetkitError {
  return new FleetkitError(
    'SSH_HOST_KEY_MISMATCH',
    `node ${node} answered with an SSH host key other than the pinned one; fleetkit did not log in`,
    {
      actions: [`check ${node}'s key out of band (provider console, ssh-keyscan from a trusted network)`],
      data: { node },
    },
  )
}

/** The key ssh would use: ANSIBLE_PRIVATE_KEY_FILE (as for Ansible), else the user's default keys. */
function privateKeyPath(env: Env): string | undefined {
  const named = env.ANSIBLE_PRIVATE_KEY_FILE?.trim()
  if (named) return named
  const home = env.HOME?.trim() || homedir()
  return ['id_ed25519', 'id_ecdsa', 'id_rsa'].map((f) => join(home, '.ssh', f)).find((p) => existsSync(p))
}

/** A host key that is not the pinned one: the login was refused before anything was sent. */
export class HostKeyRefused extends Error {
  constructor(readonly node: string) {
    super(`${node} presented an SSH host key other than the pinned one`)
    this.name = 'HostKeyRefused'
  }
}

/**
 * A node-ssh connection that is refused unless the host presents `pinnedKey` ("TYPE BASE64"): the one
 * pinning every fleetkit SSH client shares (sync's steps, the off-host WAL archive). HostKeyRefused when
 * the presented key differs, SshUnreachable when the host does not answer or refuses the login.
 * `identityFile` is the private key to log in with (default: privateKeyPath(env)); with
 * `keepaliveIntervalMs`, a host that stops answering ends the session after four unanswered keepalives.
 */
export async function connectPinned(
  target: Omit<SshTarget, 'pinnedKey'> & { pinnedKey: string },
  env: Env,
  identityFile?: string,
  options: { keepaliveIntervalMs?: number } = {},
): Promise<NodeSSH> {
  const [keyType] = target.pinnedKey.trim().split(/\s+/)
  const verify = pinnedKeyVerifier(target.pinnedKey)
  let refusedKey = false
  // Imported here: commands that never reach a host (validate) must not load node-ssh (cold-path test).
  const { NodeSSH } = await import('node-ssh')
  const ssh: NodeSSH = new NodeSSH()
  const key = identityFile ?? privateKeyPath(env)
  try {
    await ssh.connect({
      host: target.host,
      port: target.port,
      username: target.user,
      ...(key ? { privateKeyPath: key } : {}),
      ...(env.SSH_AUTH_SOCK ? { agent: env.SSH_AUTH_SOCK } : {}),
      readyTimeout: 20_000,
      ...(options.keepaliveIntervalMs ? { keepaliveInterval: options.keepaliveIntervalMs, keepaliveCountMax: 4 } : {}),
      algorithms: { serverHostKey: hostKeyAlgorithms(keyType!) as never },
      hostVerifier: (presented: Buffer) => {
        const ok = verify(presented)
        if (!ok) refusedKey = true
        return ok
      },
    })
  } catch (error) {
    ssh.dispose()
    if (refusedKey) throw new HostKeyRefused(target.node)
    throw new SshUnreachable(target.node, `${target.host}:${target.port}: ${(error as Error).message}`)
  }
  return ssh
}

/**
 * Opens an SSH session to `target` that node-ssh refuses unless the host presents the pinned key:
 * SSH_HOST_KEY_NOT_PINNED when nothing is pinned (nothing is dialled), SSH_HOST_KEY_MISMATCH when
 * the presented key differs, SshUnreachable when the host does not answer or refuses the login.
 */
export async function openPinned(target: SshTarget, env: Env): Promise<PinnedSession> {
  if (!target.pinnedKey) throw notPinnedError(target.node)
  let ssh: NodeSSH
  try {
    ssh = await connectPinned({ ...target, pinnedKey: target.pinnedKey }, env)
  } catch (error) {
    if (error instanceof HostKeyRefused) throw mismatchError(target.node)
    throw error
  }
  const asRoot = target.user === 'root' ? '' : 'sudo -n '
  return {
    asRoot,
    exec: async (command, stdin) => {
      const r = await ssh.execCommand(command, stdin === undefined ? {} : { stdin })
      return { code: r.code, stdout: r.stdout, stderr: r.stderr }
    },
    writeFile: async (path, content, mode) => {
      const sftp = await ssh.requestSFTP()
      try {
        await new Promise<void>((resolve, reject) =>
          sftp.writeFile(path, content, { mode }, (error: Error | null | undefined) =>
            error ? reject(error) : resolve(),
          ),
        )
      } finally {
        sftp.end()
      }
    },
    close: () => ssh.dispose(),
  }
}

/** The pinned host-key check before a run: null when the host presented its pinned key (or did not answer). */
export async function checkPinnedHostKey(target: SshTarget, env: Env): Promise<FleetkitError | null> {
  try {
    ;(await openPinned(target, env)).close()
    return null
  } catch (error) {
    // An unreachable host is Ansible's to report (the canary hand-over depends on it).
    if (error instanceof SshUnreachable) return null
    if (error instanceof FleetkitError) return error
    throw error
  }
}
