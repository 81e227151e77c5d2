// Renders the agent seed: a bash script from cloud-init/agent-seed.sh.tmpl that writes
// the agent's configuration, installs the verified release and enrolls. Values are validated first.
import { rawPublicKeyToSpkiPem } from '../release/ed25519-keys.js'
import { fillTemplate, readTemplate } from './template.js'
import {
  absolutePathValue,
  base64Value,
  httpsUrlValue,
  nodeIdValue,
  pemCertificatesValue,
  secretHexValue,
  versionValue,
} from './values.js'

export interface AgentSeedInput {
  nodeId: string
  gatewayUrl: string
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
  /** CA bundle of a private release mirror (release.caFile's content), when there is one. */
  releaseCaPem?: string
}

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

export function renderAgentSeed(input: AgentSeedInput): string {
  const nodeId = nodeIdValue('node id', input.nodeId)
  const gatewayUrl = httpsUrlValue('gateway.url', input.gatewayUrl)
  const enrollUrl = httpsUrlValue('gateway.enrollUrl', input.enrollUrl)
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
