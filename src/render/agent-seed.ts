// Renders the agent seed: a #cloud-config document with the same node access as the worker seed
// (the declared SSH account, the pinned host key, the first-boot guard: src/render/node-access.ts)
// that runs the bash script from cloud-init/agent-seed.sh.tmpl, which writes the agent's
// configuration, installs the verified release and enrolls. Values are validated first.
import { stringify } from 'yaml'

import { rawPublicKeyToSpkiPem } from '../release/ed25519-keys.js'
import type { FirstBootGuardInput } from './first-boot-guard.js'
import { assembleCloudConfig, type NodeAccount, nodeAccessParts } from './node-access.js'
import { fillTemplate, readTemplate } from './template.js'
import {
  absolutePathValue,
  base64Value,
  httpsUrlListValue,
  httpsUrlValue,
  nodeIdValue,
  pemCertificatesValue,
  secretHexValue,
  versionValue,
} from './values.js'

export interface AgentSeedInput {
  nodeId: string
  /** The agent listener, or several comma-separated (the gateway, then its replicas). */
  gatewayUrl: string
  /** The enrollment listener, or several comma-separated. */
  enrollUrl: string
  /** The gateway's CA bundle (PEM certificates), pinned by the agent until its first renewal. */
  caBundlePem: string
  releaseUrl: string
  /** base64 of the raw 32-byte Ed25519 release key (fleet.yaml release.publicKey). */
  releasePublicKey: string
  releaseVersion: string
  /** The single-use enrollment secret, 64 hex characters. */
  enrollmentSecret: string
  /**
   * Mount point of the declared data volume; the agent unit waits for it. Undefined: the node
   * declares none, so the unit starts at once and the agent's host:data-volume check only warns.
   */
  dataMount?: string
  /** The node declares it is a container (fleet.yaml container): FLEETKIT_CONTAINER=true in agent.env. */
  container?: boolean
  /** CA bundle of a private release mirror (release.caFile's content), when there is one. */
  releaseCaPem?: string
  /** The node's ssh.user account and pinned host key, when the definition declares ssh.user. */
  account?: NodeAccount
  /** operators.cidrs, ssh.port and exposure.publicSsh for the first-boot table. */
  guard: FirstBootGuardInput
}

/**
 * Where the seed's script waits for cloud-init's runcmd: /run is a tmpfs, so the script (which
 * holds the enrollment secret) is gone at the next boot whatever happens.
 */
export const AGENT_SEED_SCRIPT_PATH = '/run/fleetkit/agent-seed.sh'

/**
 * The unit's one placeholder. A condition on a mount nobody declared would keep the agent from ever
 * starting (docs/agent.md). ansible/roles/agent/vars/main.yml fills it with the same text (a test compares).
 */
export const NO_DATA_MOUNT_CONDITION =
  '# No data volume is declared for this node: the agent starts without waiting for a mount.'
export const DATA_MOUNT_CONDITION_PREFIX =
  '# Starts only once the declared data volume is mounted.\nConditionPathIsMountPoint='

export function dataMountCondition(dataMount: string): string {
  return dataMount === '' ? NO_DATA_MOUNT_CONDITION : `${DATA_MOUNT_CONDITION_PREFIX}${dataMount}`
}

/** The agent seed: the shared node access and guard, then the enrollment script at the end of first boot. */
export function renderAgentSeed(input: AgentSeedInput): string {
  const script = renderAgentSeedScript(input)
  const parts = nodeAccessParts({ account: input.account, guard: input.guard })
  parts.writeFiles.push({ path: AGENT_SEED_SCRIPT_PATH, owner: 'root:root', permissions: '0700', content: script })
  parts.runcmd.push(['bash', AGENT_SEED_SCRIPT_PATH])
  return `#cloud-config\n${stringify(assembleCloudConfig(parts), { lineWidth: 0 })}`
}

/** The enrollment script alone (what runcmd runs; tests run it in a sandbox root). */
export function renderAgentSeedScript(input: Omit<AgentSeedInput, 'guard' | 'account'>): string {
  const nodeId = nodeIdValue('node id', input.nodeId)
  const gatewayUrl = httpsUrlListValue('gateway.url', input.gatewayUrl)
  const enrollUrl = httpsUrlListValue('gateway.enrollUrl', input.enrollUrl)
  const caBundle = pemCertificatesValue('gateway CA bundle', input.caBundlePem)
  const releaseUrl = httpsUrlValue('release.url', input.releaseUrl)
  const releaseKey = base64Value('release.publicKey', input.releasePublicKey, 32)
  const releaseVersion = versionValue('release.version', input.releaseVersion)
  const secret = secretHexValue('enrollment secret', input.enrollmentSecret)
  const dataMount = input.dataMount === undefined ? '' : absolutePathValue('data volume mount point', input.dataMount)
  const releaseCa =
    input.releaseCaPem === undefined ? '' : pemCertificatesValue('release.caFile', input.releaseCaPem).trimEnd()

  // The same template the agent role fills (ansible/roles/agent), so a seeded host converges with changed=0.
  const agentEnv = fillTemplate(readTemplate('agent.env.tmpl'), {
    NODE_ID: nodeId,
    GATEWAY_URL: gatewayUrl,
    ENROLL_URL: enrollUrl,
    DATA_MOUNT: dataMount,
    CONTAINER: input.container === true ? 'true' : 'false',
  }).trimEnd()
  const releaseEnv = [`FLEETKIT_RELEASE_URL=${releaseUrl}`, `FLEETKIT_RELEASE_VERSION=${releaseVersion}`].join('\n')
  const unit = fillTemplate(readTemplate('fleetkit-agent.service.tmpl'), {
    DATA_MOUNT_CONDITION: dataMountCondition(dataMount),
  }).trimEnd()

  return fillTemplate(readTemplate('agent-seed.sh.tmpl'), {
    AGENT_ENV: agentEnv,
    RELEASE_ENV: releaseEnv,
    GATEWAY_CA_BUNDLE: caBundle.trimEnd(),
    RELEASE_CA_BUNDLE: releaseCa,
    RELEASE_PUBLIC_KEY_PEM: rawPublicKeyToSpkiPem(releaseKey).trimEnd(),
    ENROLLMENT_SECRET: secret,
    VERIFY_RELEASE_SH: readTemplate('verify-release.sh').trimEnd(),
    AGENT_UNIT: unit,
  })
}
