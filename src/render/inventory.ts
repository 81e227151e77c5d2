// Renders the Ansible inventory (YAML) from the definition and the nodes in the state:
// groups per pool, region, role and canary; SSH and policy host vars; a pinned known_hosts.
// Each node's ansible_host follows node-address.ts: a provisioned node is its server's address.
import { stringify } from 'yaml'

import { FleetkitError } from '../checks/fleetkit-error.js'
import type { Definition, NodeDeclaration } from '../definition/types.js'
import { type AddressStateNode, nodeAddress, unprovisionedStep } from './node-address.js'
import {
  absolutePathValue,
  deviceValue,
  hostNameValue,
  nodeIdValue,
  pemCertificatesValue,
  portValue,
  posixUserValue,
  sshPublicKeyValue,
} from './values.js'

/** The part of a state row the inventory reads (src/store/nodes/nodes.ts NodeRow has more). */
export interface InventoryStateNode extends AddressStateNode {
  region?: string | null
  status: string
  /** `node provision`'s step: says what an unprovisioned node waits for. */
  provisionState?: string | null
  hostKeyPublic?: string | null
  /** The provisioned volume's step (node provision --volume) and its device on the host. */
  volumeState?: string | null
  volumeLinuxDevice?: string | null
}

export interface InventoryInput {
  definition: Definition
  stateNodes: readonly InventoryStateNode[]
  /** policy/host-policy.yaml as read; handed to the roles unchanged under fleetkit_host_policy. */
  hostPolicy: unknown
  /** Absolute path the known_hosts file is written to; ssh reads it on every connection. */
  knownHostsPath: string
  /** release.caFile's content (a private release mirror's CA): agent_update verifies downloads with it. */
  releaseCaPem?: string
}

export interface RenderedInventory {
  yaml: string
  /**
   * What a converge depends on, for sync's fingerprint: the inventory without each host's lifecycle
   * status. No role reads `fleetkit_status`, and sync's own enrollment changes it (provisioning to
   * active), so with it a node's first sync could never be matched by the next.
   */
  convergeInputs: string
  knownHosts: string
  hosts: string[]
  groups: string[]
  /** Hosts without a pinned host key: ssh refuses them (StrictHostKeyChecking=yes). */
  unpinned: string[]
  /** Declared or state nodes left out because their state is parked or retired. */
  excluded: string[]
  /**
   * Nodes in a pool with a provider left out because they have no address yet: no provisioned server
   * address in the state and no ssh.host (node-address.ts), each with why and what to run.
   */
  unprovisioned: { node: string; reason: string; action: string }[]
}

/** Nodes in these states are not converged: they are out of the fleet until admitted again. */
const EXCLUDED_STATUSES: ReadonlySet<string> = new Set(['parked', 'retired'])

/** Where a provisioned volume is mounted when the node declares no dataVolume (the data_volume role's default). */
const DEFAULT_DATA_MOUNT = '/srv/fleetkit'

const DEFAULT_SSH_USER = 'root'
const DEFAULT_SSH_PORT = 22

function groupName(prefix: string, name: string): string {
  return `${prefix}_${name.replace(/[^A-Za-z0-9_]/g, '_')}`
}

function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** "TYPE BLOB" of an OpenSSH public key line: the comment is not part of the key. */
function keyOf(line: string): string {
  return line.trim().split(/\s+/).slice(0, 2).join(' ')
}

function assertHostKeysAgree(id: string, state: string | null | undefined, declared: string | undefined): void {
  if (!state || !declared || keyOf(state) === keyOf(declared)) return
  throw new FleetkitError(
    'HOST_KEY_DISAGREES',
    `node ${id}: the host key pinned in the state (${keyOf(state).slice(0, 40)}...) differs from its hostKey in fleet.yaml (${keyOf(declared).slice(0, 40)}...); the inventory was not written`,
    {
      actions: [
        `check the host's key (ssh-keyscan HOST) and put the true one as hostKey of ${id} in fleet.yaml`,
        'fleetkit inventory',
      ],
      data: { node: id },
    },
  )
}

/**
 * The node's data volume for the data_volume role: the declared one, its device replaced by the
 * attached provider volume's (node provision --volume; a Hetzner device path is known only once
 * the volume exists), mounted where the node declares, else at the role's default.
 */
function dataVolumeOf(
  id: string,
  node: NodeDeclaration | undefined,
  row: InventoryStateNode | undefined,
): NodeDeclaration['dataVolume'] | null {
  const device = row?.volumeState === 'attached' ? row.volumeLinuxDevice : null
  if (!device) return node?.dataVolume ?? null
  return {
    filesystem: 'xfs',
    mountPoint: DEFAULT_DATA_MOUNT,
    ...node?.dataVolume,
    device: deviceValue(`nodes[${id}] provisioned volume device`, device),
  }
}

export function renderInventory(input: InventoryInput): RenderedInventory {
  const { definition } = input
  const knownHostsPath = absolutePathValue('known_hosts path', input.knownHostsPath)
  const state = new Map(input.stateNodes.map((n) => [n.id, n]))
  const declared = new Map(definition.nodes.map((n) => [n.id, n]))
  const ids = [...new Set([...declared.keys(), ...state.keys()])].sort(byName)

  const groups = new Map<string, string[]>()
  const addToGroup = (group: string, id: string) => {
    const members = groups.get(group)
    if (members) members.push(id)
    else groups.set(group, [id])
  }
  const hosts: Record<string, Record<string, unknown>> = {}
  const knownHosts: string[] = []
  const unpinned: string[] = []
  const excluded: string[] = []
  const unprovisioned: RenderedInventory['unprovisioned'] = []

  for (const id of ids) {
    const node: NodeDeclaration | undefined = declared.get(id)
    const row = state.get(id)
    if (row && EXCLUDED_STATUSES.has(row.status)) {
      excluded.push(id)
      continue
    }
    nodeIdValue(`nodes[${id}].id`, id)
    // A provisioned node is its server: an ssh.host that disagrees refuses the whole inventory.
    const address = nodeAddress(definition, id, node, row)
    if (address.source === 'unprovisioned') {
      unprovisioned.push({ node: id, ...unprovisionedStep(id, row) })
      continue
    }
    const poolName = node?.pool ?? row!.pool
    const pool = definition.pools[poolName]
    const region = node?.region ?? row?.region ?? undefined
    const vars: Record<string, unknown> = {}
    if (address.host !== null)
      vars.ansible_host = hostNameValue(
        address.source === 'provisioned' ? `nodes[${id}] provisioned server address` : `nodes[${id}].ssh.host`,
        address.host,
      )
    vars.ansible_user = posixUserValue(`nodes[${id}].ssh.user`, node?.ssh?.user ?? DEFAULT_SSH_USER, {
      allowRoot: true,
    })
    vars.ansible_port = portValue(`nodes[${id}].ssh.port`, node?.ssh?.port ?? DEFAULT_SSH_PORT)
    // HostKeyAlias keys known_hosts by node id, so a changed address keeps the pinned key.
    vars.ansible_ssh_common_args = `-o UserKnownHostsFile=${knownHostsPath} -o StrictHostKeyChecking=yes -o HostKeyAlias=${id}`
    vars.fleetkit_node_id = id
    vars.fleetkit_pool = poolName
    vars.fleetkit_role = pool?.role ?? null
    vars.fleetkit_region = region ?? null
    vars.fleetkit_status = row?.status ?? 'declared'
    vars.fleetkit_declared_state = node?.state ?? null
    vars.fleetkit_ingress = pool?.ingress === true
    // Field by field: a node's field replaces the pool's, which replaces the fleet's.
    vars.fleetkit_features = { ...definition.features, ...pool?.features, ...node?.features }
    vars.fleetkit_exposure = { ...definition.exposure, ...pool?.exposure, ...node?.exposure }
    vars.fleetkit_data_volume = dataVolumeOf(id, node, row)
    // The canary may run ahead of the fleet (agent_update_version, ansible/playbooks/vars/roles.yml).
    vars.fleetkit_agent_version = node?.agentVersion ?? null
    // A declared fact (fleet.yaml container: true): preflight accepts the container, the kernel parts are not applicable.
    vars.fleetkit_container = node?.container === true
    vars.fleetkit_docker_network_policy = pool?.dockerNetworkPolicy ?? null
    hosts[id] = vars

    // The definition's hostKey is the reviewed truth; the state's key (from a worker seed) must
    // agree with it, or one of them is wrong and ssh would trust the wrong host.
    assertHostKeysAgree(id, row?.hostKeyPublic, node?.hostKey)
    const pinned = row?.hostKeyPublic ?? node?.hostKey ?? undefined
    if (pinned) {
      const [type, blob] = sshPublicKeyValue(`nodes[${id}].hostKey`, pinned.trim()).split(' ')
      knownHosts.push(`${id} ${type} ${blob}`)
    } else {
      unpinned.push(id)
    }

    addToGroup(groupName('pool', poolName), id)
    if (pool?.role) addToGroup(groupName('role', pool.role), id)
    if (region) addToGroup(groupName('region', region), id)
    if (definition.canary === id) addToGroup('canary', id)
  }

  const children: Record<string, { hosts: Record<string, null> }> = {}
  for (const name of [...groups.keys()].sort(byName)) {
    children[name] = { hosts: Object.fromEntries(groups.get(name)!.map((id) => [id, null])) }
  }
  const document = {
    all: {
      vars: {
        fleetkit_fleet: definition.fleet,
        fleetkit_gateway: definition.gateway,
        fleetkit_release: {
          url: definition.release.url,
          version: definition.release.version,
          publicKey: definition.release.publicKey,
          ...(input.releaseCaPem === undefined
            ? {}
            : { caPem: pemCertificatesValue('release.caFile', input.releaseCaPem) }),
        },
        fleetkit_operator_cidrs: definition.operators.cidrs,
        fleetkit_known_hosts_file: knownHostsPath,
        fleetkit_host_policy: input.hostPolicy,
      },
      hosts,
      children,
    },
  }
  const header = '# Rendered by `fleetkit inventory` from the fleet definition and the state. Do not edit.\n'
  const inputs = { all: { ...document.all, hosts: structuredClone(hosts) } }
  for (const vars of Object.values(inputs.all.hosts)) delete vars.fleetkit_status
  // YAML 1.1 so that values such as "yes" or "on" are quoted for Ansible's YAML 1.1 reader.
  const yamlOf = (doc: unknown) => stringify(doc, { version: '1.1', lineWidth: 0, aliasDuplicateObjects: false })
  return {
    yaml: header + yamlOf(document),
    convergeInputs: yamlOf(inputs),
    knownHosts: knownHosts.length === 0 ? '' : `${knownHosts.join('\n')}\n`,
    hosts: Object.keys(hosts),
    groups: Object.keys(children),
    unpinned,
    excluded,
    unprovisioned,
  }
}
