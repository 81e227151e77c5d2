// Renders the worker seed: a #cloud-config document with the declared non-root account, the
// operators' keys, a checked sudoers rule, the host's pre-generated SSH host key and the first-boot
// guard (src/render/node-access.ts, shared with the agent seed). It installs nothing: the first
// `fleetkit sync` converges the host and hands the agent its enrollment over SSH.
import { stringify } from 'yaml'

import type { FirstBootGuardInput } from './first-boot-guard.js'
import { assembleCloudConfig, nodeAccessParts } from './node-access.js'
import type { SshHostKey } from './ssh-host-key.js'
import { hostNameValue } from './values.js'

export { DEFAULT_SUDO_RULE } from './node-access.js'

export interface WorkerSeedInput {
  nodeId: string
  /** The declared non-root account (node ssh.user). */
  user: string
  /** The declared ssh.port; sshd is configured to listen on it when it is not 22. */
  sshPort?: number
  operatorKeys: readonly string[]
  hostKey: SshHostKey
  sudoRule?: string
  /** operators.cidrs and exposure.publicSsh for the first-boot table (SSH from nowhere else). */
  guard: Omit<FirstBootGuardInput, 'sshPort'>
  /** Wrap the document for an Ubuntu ISO install (autoinstall with nested user-data). */
  autoinstall?: boolean
}

export function workerCloudConfig(input: WorkerSeedInput): Record<string, unknown> {
  const hostname = hostNameValue('node id', input.nodeId)
  const parts = nodeAccessParts({
    account: {
      user: input.user,
      operatorKeys: input.operatorKeys,
      hostKey: input.hostKey,
      sudoRule: input.sudoRule,
      sshPort: input.sshPort,
    },
    guard: { ...input.guard, sshPort: input.sshPort },
  })
  const config = assembleCloudConfig(parts)
  return { hostname, ...config, package_update: true }
}

export function renderWorkerSeed(input: WorkerSeedInput): string {
  const config = workerCloudConfig(input)
  const document = input.autoinstall
    ? { autoinstall: { version: 1, ssh: { 'install-server': true, 'allow-pw': false }, 'user-data': config } }
    : config
  return `#cloud-config\n${stringify(document, { lineWidth: 0 })}`
}
