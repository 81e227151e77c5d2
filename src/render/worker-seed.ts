// Renders the worker seed: a #cloud-config document with the declared non-root account,
// the operators' keys, a checked sudoers rule and the host's pre-generated SSH host key.
import { stringify } from 'yaml'

import type { SshHostKey } from './ssh-host-key.js'
import { hostNameValue, portValue, posixUserValue, sshPublicKeyValue, sudoRuleValue } from './values.js'

export interface WorkerSeedInput {
  nodeId: string
  /** The declared non-root account (node ssh.user). */
  user: string
  /** The declared ssh.port; sshd is configured to listen on it when it is not 22. */
  sshPort?: number
  operatorKeys: readonly string[]
  hostKey: SshHostKey
  sudoRule?: string
  /** Wrap the document for an Ubuntu ISO install (autoinstall with nested user-data). */
  autoinstall?: boolean
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

export function workerCloudConfig(input: WorkerSeedInput): Record<string, unknown> {
  const hostname = hostNameValue('node id', input.nodeId)
  const user = posixUserValue('ssh.user', input.user)
  const keys = input.operatorKeys.map((key, i) => sshPublicKeyValue(`operators.sshKeys[${i}]`, key))
  const sudo = sudoRuleValue('sudo rule', input.sudoRule ?? DEFAULT_SUDO_RULE)
  const port = portValue('ssh.port', input.sshPort ?? DEFAULT_SSH_PORT)
  const hostPublic = sshPublicKeyValue('host key', input.hostKey.publicKey)
  if (!OPENSSH_PRIVATE.test(input.hostKey.privateKey) || !hostPublic.startsWith('ssh-ed25519 ')) {
    throw new Error('the generated host key is not an OpenSSH Ed25519 key')
  }
  return {
    hostname,
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
    ssh_keys: { ed25519_private: input.hostKey.privateKey, ed25519_public: hostPublic },
    package_update: true,
    // The inventory connects on ssh.port, so sshd must listen there from the first boot.
    ...(port === DEFAULT_SSH_PORT
      ? {}
      : {
          write_files: [
            {
              path: SSHD_PORT_DROP_IN,
              owner: 'root:root',
              permissions: '0644',
              content: `# Written by the fleetkit worker seed: ssh.port of this node in fleet.yaml.\nPort ${port}\n`,
            },
          ],
          runcmd: [['sh', '-c', SSHD_RESTART]],
        }),
  }
}

export function renderWorkerSeed(input: WorkerSeedInput): string {
  const config = workerCloudConfig(input)
  const document = input.autoinstall
    ? { autoinstall: { version: 1, ssh: { 'install-server': true, 'allow-pw': false }, 'user-data': config } }
    : config
  return `#cloud-config\n${stringify(document, { lineWidth: 0 })}`
}
