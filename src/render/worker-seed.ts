// Renders the worker seed: a #cloud-config document with the declared non-root account,
// the operators' keys, a checked sudoers rule and the host's pre-generated SSH host key.
import { stringify } from 'yaml'

import type { SshHostKey } from './ssh-host-key.js'
import { hostNameValue, posixUserValue, sshPublicKeyValue, sudoRuleValue } from './values.js'

export interface WorkerSeedInput {
  nodeId: string
  /** The declared non-root account (node ssh.user). */
  user: string
  operatorKeys: readonly string[]
  hostKey: SshHostKey
  sudoRule?: string
  /** Wrap the document for an Ubuntu ISO install (autoinstall with nested user-data). */
  autoinstall?: boolean
}

export const DEFAULT_SUDO_RULE = 'ALL=(ALL) NOPASSWD:ALL'

const OPENSSH_PRIVATE = /^-----BEGIN OPENSSH PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+-----END OPENSSH PRIVATE KEY-----\n$/

export function workerCloudConfig(input: WorkerSeedInput): Record<string, unknown> {
  const hostname = hostNameValue('node id', input.nodeId)
  const user = posixUserValue('ssh.user', input.user)
  const keys = input.operatorKeys.map((key, i) => sshPublicKeyValue(`operators.sshKeys[${i}]`, key))
  const sudo = sudoRuleValue('sudo rule', input.sudoRule ?? DEFAULT_SUDO_RULE)
  const hostPublic = sshPublicKeyValue('host key', input.hostKey.publicKey)
  if (!OPENSSH_PRIVATE.test(input.hostKey.privateKey) || !hostPublic.startsWith('ssh-ed25519 ')) {
    throw new Error('the generated host key is not an OpenSSH Ed25519 key')
  }
  return {
    hostname,
    users: [{ name: user, gecos: 'fleetkit operator account', shell: '/bin/bash', lock_passwd: true, sudo, ssh_authorized_keys: keys }],
    disable_root: true,
    ssh_pwauth: false,
    // Only the pinned key: fleetkit stored its public half, so the first connection is verified.
    ssh_deletekeys: true,
    // ed25519 is already written from ssh_keys, so nothing new is generated.
    ssh_genkeytypes: ['ed25519'],
    ssh_keys: { ed25519_private: input.hostKey.privateKey, ed25519_public: hostPublic },
    package_update: true,
  }
}

export function renderWorkerSeed(input: WorkerSeedInput): string {
  const config = workerCloudConfig(input)
  const document = input.autoinstall
    ? { autoinstall: { version: 1, ssh: { 'install-server': true, 'allow-pw': false }, 'user-data': config } }
    : config
  return `#cloud-config\n${stringify(document, { lineWidth: 0 })}`
}
