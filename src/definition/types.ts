// The Definition type: fleet.yaml after schema validation, as every other area reads it.
// The JSON Schema (schema/fleet.schema.json) is the authority for the file; this mirrors it.

export type NodeDeclaredState = 'active' | 'drained' | 'disabled'

export interface Capacity {
  /** @minimum 0 */
  cpu: number
  /**
   * @minimum 0
   * @asType integer
   */
  memoryMiB: number
  /**
   * @minimum 0
   * @asType integer
   */
  diskGiB: number
}

interface Features {
  containers?: boolean
  /** Install Tailscale and join the tailnet (ansible/roles/tailscale). */
  tailscale?: boolean
  session?: 'headless'
  preset?: string
}

interface PublicPort {
  protocol: 'tcp' | 'udp'
  port: number
}

export interface Exposure {
  publicSsh?: boolean
  publicPorts?: PublicPort[]
  otherListeners?: 'warn' | 'fail'
}

export interface DockerNetworkPolicy {
  /** IPv4 CIDR the pool's container networks are cut from, e.g. 10.200.0.0/16. */
  base: string
  /** Prefix length of each allocated network (no broader than base, no longer than /29). */
  prefix: number
  maxRunners: number
  networksPerRunner: number
  reserveSubnets: number
  /** Interface address with prefix for docker0 (bip), e.g. 10.199.0.1/24. */
  defaultBridgeCidr?: string
}

interface Pool {
  role: string
  ingress?: boolean
  /** Its nodes hold state: a lost one's allocations are stranded, not released (src/store/nodes/sweep.ts). */
  stateful?: boolean
  capacityBudget: Capacity
  serverType?: string
  image?: string
  regions?: string[]
  features?: Features
  exposure?: Exposure
  dockerNetworkPolicy?: DockerNetworkPolicy
}

interface SshTarget {
  /**
   * Required except on a node in a pool with a provider (provider-pools.ts), whose address is the
   * server fleetkit provisioned; when given there, it must be that address (NODE_ADDRESS_DISAGREES).
   */
  host?: string
  user?: string
  port?: number
}

interface DataVolume {
  /** A block device path (/dev/...) or a provider volume name. */
  device: string
  filesystem: 'xfs'
  mountPoint: string
}

export interface NodeDeclaration {
  id: string
  pool: string
  state: NodeDeclaredState
  ssh?: SshTarget
  /** Pinned SSH host public key ("ssh-ed25519 AAAA..."). */
  hostKey?: string
  /** This node's own agent version (the canary proves one before release.version moves). */
  agentVersion?: string
  /** The host is a container sharing its host's kernel: its kernel parts are not applicable. */
  container?: boolean
  features?: Features
  exposure?: Exposure
  dataVolume?: DataVolume
  maxCapacity?: Capacity
  region?: string
  serverType?: string
}

export interface Definition {
  version: 1
  fleet: string
  /** The file is an example: documentation ranges are accepted, and commands that reach real hosts refuse it. */
  example?: boolean
  gateway: { url: string; enrollUrl: string; replicas?: { url: string; enrollUrl: string }[] }
  release: { url: string; publicKey: string; version: string; caFile?: string }
  operators: { cidrs: string[]; sshKeys: string[] }
  providers?: { hetzner?: { tokenEnv?: string; sshKeys?: string[]; endpoint?: string } }
  pools: Record<string, Pool>
  /** Absent in the file means none; the loader always fills it. */
  nodes: NodeDeclaration[]
  canary?: string
  features?: Features
  exposure?: Exposure
}

/** The check that found an error (schema/check-ids.json). */
type DefinitionCheckId = 'definition:schema' | 'definition:semantics' | 'definition:transition'

/** One rule violation: a registered code and where in the file it is (RFC 6901 pointer). */
export interface DefinitionError {
  /** @pattern ^[A-Z][A-Z0-9_]+$ */
  code: string
  check: DefinitionCheckId
  /** @pattern ^(/.*)?$ */
  path: string
  expected: unknown
  actual: unknown
  /**
   * One line; never holds a secret value (only its path and kind).
   * @minLength 1
   */
  message: string
  /**
   * 1-based position in the source file, when the pointer resolves to one.
   * @asType integer
   * @minimum 1
   */
  line?: number
  /**
   * @asType integer
   * @minimum 1
   */
  column?: number
}
