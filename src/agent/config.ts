// The agent's configuration: agent.env (KEY=VALUE lines), then the environment, then
// flags, each overriding the one before; every path is configurable so tests run in a temp dir.
import { readFileSync } from 'node:fs'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { isHttpsUrl, isNodeIdOrUuid } from '../definition/grammar.js'

export interface AgentConfig {
  configFile: string
  nodeId: string
  /** Enrollment listener (server-auth TLS), e.g. https://gateway:8444: the first of enrollUrls. */
  enrollUrl: string
  /** Every enrollment listener (FLEETKIT_ENROLL_URL, comma-separated): a gateway and its replicas. */
  enrollUrls: string[]
  /** Agent listener (mTLS), e.g. https://gateway:8443: the first of gatewayUrls. */
  gatewayUrl: string
  /** Every agent listener (FLEETKIT_GATEWAY_URL, comma-separated); the agent moves along them on failure. */
  gatewayUrls: string[]
  /** The CA bundle the seed pinned; trusted until a renewal stages pkiDir/gateway-ca.pem. */
  caFile: string
  secretFile: string
  pkiDir: string
  /** Where /proc, /sys and the data mount are read from; '/' on a real host. */
  hostRoot: string
  /** The data volume mount point; '' when the pool declares none. */
  dataMount: string
  /** The node declares it is a container (fleet.yaml container): its kernel checks are not applicable. */
  container: boolean
  minFreeGb: number
  heartbeatSeconds: number
  /** The longest wait between calls while the gateway is unreachable (the backoff's cap). */
  backoffMaxSeconds: number
  renewCheckSeconds: number
  requestTimeoutSeconds: number
  unitName: string
  firewallUnit: string
}

interface Setting {
  key: keyof Omit<AgentConfig, 'configFile' | 'enrollUrls' | 'gatewayUrls'>
  env: string
  flag: string
  default?: string
  /** `urls`: one https URL or several comma-separated; the key holds the first, `listKey` all of them. */
  kind: 'string' | 'urls' | 'number' | 'node-id' | 'boolean'
  listKey?: 'enrollUrls' | 'gatewayUrls'
}

export const SETTINGS: readonly Setting[] = [
  { key: 'nodeId', env: 'FLEETKIT_NODE_ID', flag: 'node-id', kind: 'node-id' },
  { key: 'enrollUrl', env: 'FLEETKIT_ENROLL_URL', flag: 'enroll-url', kind: 'urls', listKey: 'enrollUrls' },
  { key: 'gatewayUrl', env: 'FLEETKIT_GATEWAY_URL', flag: 'gateway-url', kind: 'urls', listKey: 'gatewayUrls' },
  {
    key: 'caFile',
    env: 'FLEETKIT_GATEWAY_CA_FILE',
    flag: 'ca-file',
    default: '/etc/fleetkit/gateway-ca.pem',
    kind: 'string',
  },
  {
    key: 'secretFile',
    env: 'FLEETKIT_ENROLLMENT_SECRET_FILE',
    flag: 'secret-file',
    default: '/var/lib/fleetkit/enrollment-secret',
    kind: 'string',
  },
  { key: 'pkiDir', env: 'FLEETKIT_AGENT_PKI_DIR', flag: 'pki-dir', default: '/var/lib/fleetkit/pki', kind: 'string' },
  { key: 'hostRoot', env: 'FLEETKIT_HOST_ROOT', flag: 'host-root', default: '/', kind: 'string' },
  { key: 'dataMount', env: 'FLEETKIT_DATA_MOUNT', flag: 'data-mount', default: '', kind: 'string' },
  { key: 'container', env: 'FLEETKIT_CONTAINER', flag: 'container', default: 'false', kind: 'boolean' },
  { key: 'minFreeGb', env: 'FLEETKIT_AGENT_MIN_FREE_GB', flag: 'min-free-gb', default: '5', kind: 'number' },
  {
    key: 'heartbeatSeconds',
    env: 'FLEETKIT_AGENT_HEARTBEAT_SECONDS',
    flag: 'heartbeat-seconds',
    default: '15',
    kind: 'number',
  },
  {
    key: 'backoffMaxSeconds',
    env: 'FLEETKIT_AGENT_BACKOFF_MAX_SECONDS',
    flag: 'backoff-max-seconds',
    default: '300',
    kind: 'number',
  },
  {
    key: 'renewCheckSeconds',
    env: 'FLEETKIT_AGENT_RENEW_CHECK_SECONDS',
    flag: 'renew-check-seconds',
    default: '600',
    kind: 'number',
  },
  {
    key: 'requestTimeoutSeconds',
    env: 'FLEETKIT_AGENT_REQUEST_TIMEOUT_SECONDS',
    flag: 'request-timeout-seconds',
    default: '20',
    kind: 'number',
  },
  { key: 'unitName', env: 'FLEETKIT_AGENT_UNIT', flag: 'unit', default: 'fleetkit-agent.service', kind: 'string' },
  {
    key: 'firewallUnit',
    env: 'FLEETKIT_FIREWALL_UNIT',
    flag: 'firewall-unit',
    default: 'fleetkit-firewall.service',
    kind: 'string',
  },
]

const DEFAULT_CONFIG_FILE = '/etc/fleetkit/agent.env'
const CONFIG_FILE_ENV = 'FLEETKIT_AGENT_CONFIG'

/** Parses systemd EnvironmentFile-style text: KEY=VALUE, # comments, optional single or double quotes. */
export function parseEnvFile(text: string): Record<string, string> {
  const values: Record<string, string> = {}
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line)
    if (!match) continue
    let value = match[2]!
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0]))
      value = value.slice(1, -1)
    values[match[1]!] = value
  }
  return values
}

export interface ConfigSources {
  env: Record<string, string | undefined>
  flags: Record<string, string>
  readFile?: (path: string) => string
}

export function loadAgentConfig(sources: ConfigSources): AgentConfig {
  const read = sources.readFile ?? ((path: string) => readFileSync(path, 'utf8'))
  const explicit = sources.flags['config'] ?? sources.env[CONFIG_FILE_ENV]
  const configFile = explicit ?? DEFAULT_CONFIG_FILE
  let fileValues: Record<string, string> = {}
  try {
    fileValues = parseEnvFile(read(configFile))
  } catch (error) {
    // The default file may be absent when everything comes from the environment (tests, hand runs).
    if (explicit !== undefined || (error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new FleetkitError(
        'AGENT_CONFIG_INVALID',
        `cannot read the agent configuration ${configFile}: ${(error as Error).message}`,
        {
          actions: [`check that ${configFile} exists and is readable by the agent's user`],
          data: { configFile },
        },
      )
    }
  }
  const config: Record<string, unknown> = { configFile }
  for (const setting of SETTINGS) {
    const raw =
      sources.flags[setting.flag] ?? sources.env[setting.env] ?? fileValues[setting.env] ?? setting.default ?? ''
    if (setting.listKey) {
      const urls = [...new Set(raw.split(',').map((url) => convert(setting, url.trim(), configFile) as string))].filter(
        (url) => url !== '',
      )
      config[setting.listKey] = urls
      config[setting.key] = urls[0] ?? ''
      continue
    }
    config[setting.key] = convert(setting, raw.trim(), configFile)
  }
  return config as unknown as AgentConfig
}

function convert(setting: Setting, raw: string, configFile: string): string | number | boolean {
  const invalid = (why: string) =>
    new FleetkitError('AGENT_CONFIG_INVALID', `${setting.env} ${why}`, {
      actions: [`set ${setting.env} in ${configFile} or pass --${setting.flag}`],
      data: { setting: setting.env },
    })
  if (setting.kind === 'number') {
    const value = Number(raw)
    if (raw === '' || !Number.isFinite(value) || value <= 0)
      throw invalid(`must be a positive number, got ${JSON.stringify(raw)}`)
    return value
  }
  if (setting.kind === 'boolean') {
    if (raw === '' || raw === 'false') return false
    if (raw === 'true') return true
    throw invalid(`must be true or false, got ${JSON.stringify(raw)}`)
  }
  if (raw === '') return ''
  if (setting.kind === 'urls') {
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      throw invalid(`is not a URL: ${JSON.stringify(raw)}`)
    }
    // The grammar fleet.yaml's gateway URLs meet (src/definition/grammar.ts), so a seed's URL always loads.
    if (url.protocol !== 'https:' || !isHttpsUrl(raw))
      throw invalid(
        'must be an https:// URL, or several comma-separated (host, optional port and path; no query or credentials)',
      )
    return url.origin
  }
  if (setting.kind === 'node-id' && !isNodeIdOrUuid(raw))
    throw invalid(`is not a valid node ID: ${JSON.stringify(raw)}`)
  return raw
}

/** Throws AGENT_CONFIG_INVALID naming the first of `keys` that is empty. */
export function requireSettings(config: AgentConfig, keys: readonly (keyof AgentConfig)[]): void {
  for (const key of keys) {
    if (config[key] !== '') continue
    const setting = SETTINGS.find((s) => s.key === key)!
    throw new FleetkitError('AGENT_CONFIG_INVALID', `${setting.env} is not set`, {
      actions: [`set ${setting.env} in ${config.configFile} or pass --${setting.flag}`],
      data: { setting: setting.env },
    })
  }
}
