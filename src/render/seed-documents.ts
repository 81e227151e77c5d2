// The seed documents of one node, pure: the definition, the node's target and the values
// (CA bundle, secret, host key) in, the user-data text out. No state, no files, no network.
import { gatewayUrlLists } from '../definition/gateway-urls.js'
import { FleetkitError } from '../checks/fleetkit-error.js'
import type { Definition } from '../definition/types.js'
import { renderAgentSeed } from './agent-seed.js'
import type { FirstBootGuardInput } from './first-boot-guard.js'
import type { SshHostKey } from './ssh-host-key.js'
import { renderWorkerSeed } from './worker-seed.js'

export type SeedKind = 'agent' | 'worker'

export interface NodeTarget {
  id: string
  pool: string
  region?: string
  serverType?: string
  /** The declared data volume's mount point; undefined when the node declares none. */
  dataMount?: string
  /** fleet.yaml's container: the host shares its host's kernel. */
  container?: boolean
  sshUser?: string
  /** The declared ssh.port; the worker seed configures sshd on it. */
  sshPort?: number
  /** The host key fleet.yaml pins (hostKey), the reviewed truth. */
  declaredHostKey?: string
  declared: boolean
}

/**
 * The agent seed of a node: the definition's gateway and release, the pinned CA bundle, the secret;
 * and, for a node that declares ssh.user, the same account and pinned host key a worker seed gives.
 */
export function agentSeedDocument(
  definition: Definition,
  target: NodeTarget,
  caBundlePem: string,
  secret: string,
  releaseCaPem?: string,
  hostKey?: SshHostKey,
): string {
  if ((target.sshUser === undefined) !== (hostKey === undefined))
    throw new Error(`agentSeedDocument: node ${target.id} needs a host key exactly when it declares ssh.user`)
  return renderAgentSeed({
    account:
      target.sshUser === undefined || hostKey === undefined
        ? undefined
        : { user: target.sshUser, sshPort: target.sshPort, operatorKeys: definition.operators.sshKeys, hostKey },
    guard: firstBootGuard(definition, target),
    releaseCaPem,
    nodeId: target.id,
    gatewayUrl: gatewayUrlLists(definition.gateway).agent.join(','),
    enrollUrl: gatewayUrlLists(definition.gateway).enroll.join(','),
    caBundlePem,
    releaseUrl: definition.release.url,
    releasePublicKey: definition.release.publicKey,
    releaseVersion: definition.release.version,
    enrollmentSecret: secret,
    dataMount: target.dataMount,
    container: target.container === true,
  })
}

/** The worker seed of a node: its declared account (ssh.user), the operators' keys, its host key. */
export function workerSeedDocument(
  definition: Definition,
  target: NodeTarget,
  hostKey: SshHostKey,
  autoinstall: boolean,
): string {
  // Checked before anything else: a worker without a declared account is a definition to
  // complete, not a value to refuse (SEED_VALUE_INVALID stays unreachable from a valid file).
  if (target.sshUser === undefined) {
    throw new FleetkitError(
      'WORKER_SSH_UNDECLARED',
      `node ${target.id} declares no ssh.user in the definition: a worker seed creates that account and Ansible logs in as it`,
      {
        actions: [
          `add ssh: {host: ..., user: ...} to node ${target.id} in fleet.yaml`,
          `or fleetkit seed ${target.id} --kind agent`,
        ],
        data: { node: target.id },
      },
    )
  }
  return renderWorkerSeed({
    nodeId: target.id,
    user: target.sshUser,
    sshPort: target.sshPort,
    operatorKeys: definition.operators.sshKeys,
    hostKey,
    guard: firstBootGuard(definition, target),
    autoinstall,
  })
}

/**
 * What the first-boot table admits: SSH on the node's port from operators.cidrs, or from everywhere
 * with exposure.publicSsh (node over pool over fleet, as the inventory merges it for the firewall role).
 */
function firstBootGuard(definition: Definition, target: NodeTarget): FirstBootGuardInput {
  const node = definition.nodes.find((n) => n.id === target.id)
  const pool = definition.pools[target.pool]
  const exposure = { ...definition.exposure, ...pool?.exposure, ...node?.exposure }
  return { operatorCidrs: definition.operators.cidrs, sshPort: target.sshPort, publicSsh: exposure.publicSsh === true }
}

/** A node is declared in the definition, or known to the state (provisioned by fleetkit). */
export function nodeTarget(
  definition: Definition,
  nodeId: string,
  row: { id: string; pool: string; region?: string | null; serverType?: string | null } | null | undefined,
): NodeTarget {
  const declared = definition.nodes.find((n) => n.id === nodeId)
  if (declared) {
    const pool = definition.pools[declared.pool]
    return {
      id: declared.id,
      pool: declared.pool,
      region: declared.region ?? row?.region ?? pool?.regions?.[0],
      serverType: declared.serverType ?? row?.serverType ?? pool?.serverType,
      dataMount: declared.dataVolume?.mountPoint,
      container: declared.container === true,
      sshUser: declared.ssh?.user,
      sshPort: declared.ssh?.port,
      declaredHostKey: declared.hostKey,
      declared: true,
    }
  }
  if (row) {
    return {
      id: row.id,
      pool: row.pool,
      region: row.region ?? undefined,
      serverType: row.serverType ?? undefined,
      declared: false,
    }
  }
  throw new FleetkitError(
    'NODE_UNKNOWN',
    `node ${JSON.stringify(nodeId.slice(0, 64))} is neither declared in the fleet definition nor in the state`,
    {
      actions: ['declare the node under nodes: in fleet.yaml', 'fleetkit validate'],
      data: { node: nodeId.slice(0, 64) },
    },
  )
}
