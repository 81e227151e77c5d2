// The part of a cloud-config both seed kinds share: the declared SSH account with the operators'
// keys and a checked sudoers rule, the pinned Ed25519 host key, sshd on the declared port, and the
// first-boot guard (br_netfilter and the minimal inet fleetkit table). One function, so a node
// booted from either seed is reached by `fleetkit sync` the same way.
import { firstBootGuardScript, type FirstBootGuardInput } from './first-boot-guard.js'
import type { SshHostKey } from './ssh-host-key.js'
import { portValue, posixUserValue, sshPublicKeyValue, sudoRuleValue } from './values.js'

export interface NodeAccount {
  /** The declared non-root account (node ssh.user). */
  user: string
  operatorKeys: readonly string[]
  /** Generated at render; its public half is pinned in the state, so the first connection is verified. */
  hostKey: SshHostKey
  sudoRule?: string
  /** The declared ssh.port; sshd is configured to listen on it when it is not 22. */
  sshPort?: number
}

export interface NodeAccessInput {
  /** Absent for a node that declares no ssh.user (an agent seed only: the worker seed requires one). */
  account?: NodeAccount
  guard: FirstBootGuardInput
}

export const DEFAULT_SUDO_RULE = 'ALL=(ALL) NOPASSWD:ALL'
const DEFAULT_SSH_PORT = 22
const SSHD_PORT_DROP_IN = '/etc/ssh/sshd_config.d/10-fleetkit-port.conf'

/**
 * Applies the port drop-in: sshd checks the file first; Ubuntu 22.10 and later start sshd from
 * ssh.socket, whose generator reads Port on daemon-reload, older systems run ssh.service.
 */
const SSHD_RESTART =
  'sshd -t && systemctl daemon-reload && if systemctl is-enabled --quiet ssh.socket; then systemctl restart ssh.socket; else systemctl restart ssh.service; fi'

const OPENSSH_PRIVATE = /^-----BEGIN OPENSSH PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+-----END OPENSSH PRIVATE KEY-----\n$/

export interface CloudConfigParts {
  config: Record<string, unknown>
  /** Files and commands the caller may add to (cloud-config has one list of each). */
  writeFiles: Record<string, unknown>[]
  runcmd: unknown[]
}

/** Validates every value, then returns the shared cloud-config keys and the write_files/runcmd entries. */
export function nodeAccessParts(input: NodeAccessInput): CloudConfigParts {
  // bootcmd runs in cloud-init's network stage, which systemd orders before sshd: no SSH without the table.
  const config: Record<string, unknown> = { bootcmd: [firstBootGuardScript(input.guard)] }
  const writeFiles: Record<string, unknown>[] = []
  const runcmd: unknown[] = []
  const account = input.account
  if (!account) return { config, writeFiles, runcmd }

  const user = posixUserValue('ssh.user', account.user)
  const keys = account.operatorKeys.map((key, i) => sshPublicKeyValue(`operators.sshKeys[${i}]`, key))
  const sudo = sudoRuleValue('sudo rule', account.sudoRule ?? DEFAULT_SUDO_RULE)
  const port = portValue('ssh.port', account.sshPort ?? DEFAULT_SSH_PORT)
  const hostPublic = sshPublicKeyValue('host key', account.hostKey.publicKey)
  if (!OPENSSH_PRIVATE.test(account.hostKey.privateKey) || !hostPublic.startsWith('ssh-ed25519 ')) {
    throw new Error('the generated host key is not an OpenSSH Ed25519 key')
  }
  Object.assign(config, {
    users: [
      {
        name: user,
        gecos: 'fleetkit operator account',
        shell: '/bin/bash',
        lock_passwd: true,
        sudo,
        ssh_authorized_keys: keys,
      },
    ],
    disable_root: true,
    ssh_pwauth: false,
    // Only the pinned key: fleetkit stored its public half, so the first connection is verified.
    ssh_deletekeys: true,
    // ed25519 is already written from ssh_keys, so nothing new is generated.
    ssh_genkeytypes: ['ed25519'],
    ssh_keys: { ed25519_private: account.hostKey.privateKey, ed25519_public: hostPublic },
  })
  // The inventory connects on ssh.port, so sshd must listen there from the first boot.
  if (port !== DEFAULT_SSH_PORT) {
    writeFiles.push({
      path: SSHD_PORT_DROP_IN,
      owner: 'root:root',
      permissions: '0644',
      content: `# Written by the fleetkit seed: ssh.port of this node in fleet.yaml.\nPort ${port}\n`,
    })
    runcmd.push(['sh', '-c', SSHD_RESTART])
  }
  return { config, writeFiles, runcmd }
}

/** The parts as one cloud-config object, write_files and runcmd only when they hold something. */
export function assembleCloudConfig(parts: CloudConfigParts): Record<string, unknown> {
  return {
    ...parts.config,
    ...(parts.writeFiles.length > 0 ? { write_files: parts.writeFiles } : {}),
    ...(parts.runcmd.length > 0 ? { runcmd: parts.runcmd } : {}),
  }
}
