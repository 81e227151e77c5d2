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
  const releaseCa = input.releaseCaPem === undefined ? '' : pemCertificatesValue('release.caFile', input.releaseCaPem).trimEnd()

  const agentEnv = [
    `FLEETKIT_NODE_ID=${nodeId}`,
    `FLEETKIT_GATEWAY_URL=${gatewayUrl}`,
    `FLEETKIT_ENROLL_URL=${enrollUrl}`,
    'FLEETKIT_GATEWAY_CA_FILE=/etc/fleetkit/gateway-ca.pem',
    'FLEETKIT_ENROLLMENT_SECRET_FILE=/var/lib/fleetkit/enrollment-secret',
    'FLEETKIT_AGENT_PKI_DIR=/var/lib/fleetkit/pki',
    `FLEETKIT_DATA_MOUNT=${dataMount}`,
  ].join('\n')
  const releaseEnv = [`FLEETKIT_RELEASE_URL=${releaseUrl}`, `FLEETKIT_RELEASE_VERSION=${releaseVersion}`].join('\n')
  // A condition on a mount nobody declared would keep the agent from ever starting (docs/agent.md).
  const mountCondition = dataMount === ''
    ? '# No data volume is declared for this node: the agent starts without waiting for a mount.'
    : `# Starts only once the declared data volume is mounted.\nConditionPathIsMountPoint=${dataMount}`
  const unit = fillTemplate(readTemplate('fleetkit-agent.service.tmpl'), { DATA_MOUNT_CONDITION: mountCondition }).trimEnd()

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
