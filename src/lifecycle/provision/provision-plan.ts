// What `fleetkit node provision` asks the provider for, decided before anything is created: the
// node's declaration (refused with the YAML to add when fleet.yaml lacks it), the candidate
// (region, type) pairs in order, the image, and their validation against the provider's catalogue.
import { FleetkitError } from '../../checks/fleetkit-error.js'
import { serverTypeOffer } from '../../definition/capacity.js'
import type { HostPolicy } from '../../definition/host-policy.js'
import type { Definition, NodeDeclaration } from '../../definition/types.js'
import type { Provider } from '../../provider/provider.js'
import type { ServerType } from '../../provider/hetzner-types.js'
import type { ProvisionPlan } from '../../store/provider/provisioning.js'

export interface PlanRequest {
  regions?: string[]
  types?: string[]
  image?: string
  placementGroup?: string
  /** `--volume SIZE`: a Hetzner volume of this many GB, created and attached as the node's data volume. */
  volumeSizeGb?: number
}

/** Hetzner Cloud's bounds on a volume's size, in GB. */
const VOLUME_MIN_GB = 10
const VOLUME_MAX_GB = 10_240

function volumeSizeInvalid(text: string): FleetkitError {
  return new FleetkitError(
    'VOLUME_SIZE_INVALID',
    `--volume ${JSON.stringify(text.slice(0, 32))}: a volume is a whole number of GB from ${VOLUME_MIN_GB} to ${VOLUME_MAX_GB} (Hetzner Cloud's bounds); nothing was changed`,
    { actions: ['fleetkit node provision NODE --volume 50'], data: { min: VOLUME_MIN_GB, max: VOLUME_MAX_GB } },
  )
}

/** `--volume 50` (or `50G`, `50GB`): the size in GB, within Hetzner Cloud's bounds. */
export function parseVolumeSize(text: string): number {
  const match = /^\s*(\d{1,6})\s*(?:G|GB)?\s*$/i.exec(text)
  const size = match ? Number(match[1]) : NaN
  return checkVolumeSize(size, text)
}

/** A size in GB within 10..10240, else VOLUME_SIZE_INVALID. */
function checkVolumeSize(size: number, text = String(size)): number {
  if (!Number.isInteger(size) || size < VOLUME_MIN_GB || size > VOLUME_MAX_GB) throw volumeSizeInvalid(text)
  return size
}

/** The node's declaration in fleet.yaml; NODE_UNDECLARED prints the entry to add. */
export function declaredNode(definition: Definition, nodeId: string): NodeDeclaration {
  const declared = definition.nodes.find((n) => n.id === nodeId)
  if (declared) return declared
  const pools = Object.keys(definition.pools)
  const yaml = [`nodes:`, `  - id: ${nodeId}`, `    pool: ${pools[0] ?? 'POOL'}`, `    state: active`].join('\n')
  throw new FleetkitError(
    'NODE_UNDECLARED',
    `node ${JSON.stringify(nodeId.slice(0, 64))} is not declared in fleet.yaml, and only declared nodes are provisioned; add the entry printed above (data.yaml; pool one of ${pools.join(', ') || 'none'})`,
    {
      actions: ['add the entry above under nodes: in fleet.yaml', `fleetkit node provision ${nodeId.slice(0, 64)}`],
      data: { node: nodeId.slice(0, 64), pools, yaml },
      // Lines of their own, before the error line: the message is one line, whose control characters are
      // escaped on a terminal (error-output.ts), and the entry must print as YAML to copy.
      detailLines: yaml.split('\n'),
    },
  )
}

function invalid(message: string, data: Record<string, unknown>): FleetkitError {
  return new FleetkitError('PROVISION_INPUT_INVALID', message, {
    actions: ['fleetkit provider check   (lists the locations and server types)'],
    data,
  })
}

/** The candidates: every region for the first type, then for the next type (regions vary fastest). */
export function planProvision(definition: Definition, node: NodeDeclaration, request: PlanRequest): ProvisionPlan {
  // A provider's server is a VM: preflight would refuse it as a container that is not one.
  if (node.container === true)
    throw new FleetkitError(
      'PROVISION_INPUT_INVALID',
      `node ${node.id} declares container: true, and a provider server is a VM; nothing was created`,
      {
        actions: [
          `remove container from ${node.id} in fleet.yaml to provision it as a VM`,
          `fleetkit seed ${node.id} --kind worker   (for the container you run yourself)`,
        ],
        data: { node: node.id, container: true },
      },
    )
  if (request.volumeSizeGb !== undefined) checkVolumeSize(request.volumeSizeGb)
  const pool = definition.pools[node.pool]
  const regions = request.regions ?? (node.region ? [node.region] : (pool?.regions ?? []))
  const types = request.types ?? [node.serverType ?? pool?.serverType].filter((t): t is string => t !== undefined)
  const image = request.image ?? pool?.image
  if (regions.length === 0) throw invalid(`no region for ${node.id}: pass --region or set the pool's regions`, {})
  if (types.length === 0) throw invalid(`no server type for ${node.id}: pass --type or set the pool's serverType`, {})
  if (!image) throw invalid(`no image for ${node.id}: pass --image or set the pool's image`, {})
  const candidates = types.flatMap((type) => regions.map((region) => ({ region, type })))
  return { candidates, image, placementGroup: request.placementGroup ?? null, attempt: 0 }
}

/**
 * Checks every type, location and the image (of each type's architecture) and the definition's SSH
 * keys against the provider before anything is created. Returns the types by name.
 */
export async function validatePlan(
  client: Provider,
  plan: ProvisionPlan,
  sshKeys: readonly string[],
): Promise<Map<string, ServerType>> {
  const types = new Map((await client.listServerTypes()).map((t) => [t.name, t]))
  const locations = new Set((await client.listLocations()).map((l) => l.name))
  for (const { region, type } of plan.candidates) {
    if (!types.has(type)) throw invalid(`server type ${type} does not exist at the provider`, { type })
    if (!locations.has(region)) throw invalid(`location ${region} does not exist at the provider`, { region })
  }
  for (const arch of new Set(
    [...types.values()].filter((t) => plan.candidates.some((c) => c.type === t.name)).map((t) => t.architecture),
  )) {
    const images = await client.listImages({ name: plan.image, architecture: arch })
    if (images.length === 0)
      throw invalid(`image ${plan.image} does not exist for the ${arch} architecture`, { image: plan.image, arch })
  }
  if (sshKeys.length > 0) {
    const known = new Set((await client.listSshKeys()).map((k) => k.name))
    const missing = sshKeys.filter((k) => !known.has(k))
    if (missing.length > 0) throw invalid(`SSH key(s) ${missing.join(', ')} not in the provider project`, { missing })
  }
  return types
}

/** The server type's size less the host reserve of policy/host-policy.yaml. */
export function capacityOf(type: ServerType, policy: HostPolicy): { cpu: number; memoryMib: number; diskGib: number } {
  // The provider's figures (memory in GB) in the policy's units, less the reserve: what validate allows too.
  const offer = serverTypeOffer(
    { cores: type.cores, memoryMiB: Math.round(type.memory * 1024), diskGiB: type.disk },
    policy,
  )
  return { cpu: offer.cpu, memoryMib: offer.memoryMiB, diskGib: offer.diskGiB }
}

/** `--wait`: 30s, 10m, 2h; 0 never waits. */
export function parseWait(text: string): number {
  const match = /^(\d+)(s|m|h)$/.exec(text.trim())
  if (!match && text.trim() !== '0')
    throw new FleetkitError('USAGE_INVALID', `--wait ${JSON.stringify(text)}: a duration such as 90s, 10m or 1h`)
  if (!match) return 0
  return Number(match[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[match[2] as 's' | 'm' | 'h']
}
