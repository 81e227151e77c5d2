// Where fleetkit reaches a node over SSH, one rule for the inventory, sync, drift and `node show`:
// a node fleetkit provisioned is the server it made, so its address is that server's public IPv4 as
// `node provision` recorded it in the state, else its public IPv6 (the ::1 of the server's /64). A
// fleet.yaml ssh.host that says otherwise is refused (NODE_ADDRESS_DISAGREES), never silently
// chosen over it. Any other node is reached at its declared ssh.host. A node in a pool with a
// provider that has neither yet is not provisioned: callers leave it out and say so.
import { isIP } from 'node:net'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { poolHasProvider } from '../definition/provider-pools.js'
import type { Definition, NodeDeclaration } from '../definition/types.js'

/** The part of a state row (src/store/nodes/nodes.ts NodeRow) the address rule reads. */
export interface AddressStateNode {
  id: string
  pool: string
  /** `hetzner` once `node provision` started the node; null for a node it did not provision. */
  provider?: string | null
  providerServerId?: string | null
  /** Recorded by `node provision` once the server runs (step awaiting_enrollment). */
  publicIpv4?: string | null
  /** The server's IPv6 network as recorded (the /64's first address, prefix length dropped). */
  publicIpv6?: string | null
  /** A legacy column no command writes any more: an address for a node without any other. */
  sshHost?: string | null
}

export type NodeAddress =
  /** Reach the node at `host`: its provisioned server's, its declared ssh.host, or the state's. */
  | { host: string; source: 'provisioned' | 'declared' | 'state' }
  /** A node in a pool with a provider with no server address yet and no ssh.host: `fleetkit node provision NODE`. */
  | { host: null; source: 'unprovisioned' }
  /** No address anywhere (validate warns: NODE_UNREACHABLE_BY_SYNC); the inventory name, the node id, is dialled. */
  | { host: null; source: 'none' }

/** The 8 groups of an IPv6 address, or undefined for anything else (an embedded IPv4 tail included). */
function ipv6Groups(address: string): number[] | undefined {
  if (isIP(address) !== 6 || address.includes('.')) return undefined
  const [head, tail] = address.includes('::') ? address.split('::') : [address, undefined]
  const parse = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : [])
  const left = parse(head)
  const right = parse(tail)
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill(0), ...right]
  return groups.length === 8 ? groups : undefined
}

/** An IP address in its canonical text (lower case, IPv6 compressed), for comparing two spellings. */
function canonicalIp(address: string): string {
  const version = isIP(address)
  if (version === 0) return address
  // The WHATWG URL parser serialises IPv4 and IPv6 hosts canonically (RFC 5952 for IPv6).
  const host = new URL(version === 6 ? `http://[${address}]/` : `http://${address}/`).hostname
  return version === 6 ? host.slice(1, -1) : host
}

/**
 * The address a server's recorded IPv6 is reached at: Hetzner Cloud gives a server a /64 and
 * configures its first host address (::1) on it, so a recorded network (interface part zero) means
 * that address; a recorded host address is taken as it is.
 */
export function ipv6HostAddress(recorded: string): string {
  const groups = ipv6Groups(recorded)
  if (!groups || groups.slice(4).some((g) => g !== 0)) return canonicalIp(recorded)
  groups[7] = 1
  return canonicalIp(groups.map((g) => g.toString(16)).join(':'))
}

/**
 * The address of the server fleetkit provisioned for the node, as the state recorded it: its public
 * IPv4, else its public IPv6; null for a node fleetkit did not provision, or whose server has no
 * recorded address yet (its run has not reached awaiting_enrollment).
 */
export function provisionedAddress(row: AddressStateNode | undefined): string | null {
  if (!row?.provider || row.providerServerId === null || row.providerServerId === undefined) return null
  if (row.publicIpv4) return canonicalIp(row.publicIpv4)
  if (row.publicIpv6) return ipv6HostAddress(row.publicIpv6)
  return null
}

/** Host names compare without case or a trailing dot; IP addresses by their canonical text. */
export function sameHost(a: string, b: string): boolean {
  const norm = (h: string) => canonicalIp(h.trim().replace(/\.$/, '').toLowerCase())
  return norm(a) === norm(b)
}

function addressDisagrees(id: string, declared: string, provisioned: string, row: AddressStateNode): FleetkitError {
  return new FleetkitError(
    'NODE_ADDRESS_DISAGREES',
    `node ${id}: fleet.yaml says ssh.host ${declared}, but fleetkit provisioned it as server ${row.providerServerId} at ${provisioned}; nothing was written. Remove ssh.host from ${id} in fleet.yaml (the provisioned address is used), or set it to ${provisioned}`,
    {
      actions: [
        `remove ssh.host from node ${id} in fleet.yaml, or set it to ${provisioned}`,
        `fleetkit node show ${id}   (the provisioned server and its address)`,
      ],
      data: { node: id, declared, provisioned, serverId: row.providerServerId ?? null },
    },
  )
}

/**
 * The node's SSH address by the rule above. Throws NODE_ADDRESS_DISAGREES when fleet.yaml's
 * ssh.host is not the provisioned server's address.
 */
export function nodeAddress(
  definition: Pick<Definition, 'providers' | 'pools'>,
  id: string,
  node: NodeDeclaration | undefined,
  row: AddressStateNode | undefined,
): NodeAddress {
  const declared = node?.ssh?.host
  const provisioned = provisionedAddress(row)
  if (provisioned !== null) {
    if (declared !== undefined && !sameHost(declared, provisioned))
      throw addressDisagrees(id, declared, provisioned, row!)
    return { host: provisioned, source: 'provisioned' }
  }
  if (declared !== undefined) return { host: declared, source: 'declared' }
  if (row?.sshHost) return { host: row.sshHost, source: 'state' }
  const pool = node?.pool ?? row?.pool
  if (pool !== undefined && poolHasProvider(definition, pool)) return { host: null, source: 'unprovisioned' }
  return { host: null, source: 'none' }
}

/** Why a node without an address (source `unprovisioned`) is left out, and what gives it one. */
export function unprovisionedStep(
  id: string,
  row: { provisionState?: string | null } | undefined,
): { reason: string; action: string } {
  switch (row?.provisionState) {
    case 'pending':
    case 'server_requested':
      return {
        reason: `provisioning (step ${row.provisionState}), no server address yet`,
        action: `fleetkit node provision --resume ${id}`,
      }
    case 'awaiting_enrollment':
    case 'enrolled':
      return {
        reason: 'its provisioned server has no public address recorded',
        action: `set ssh.host of ${id} in fleet.yaml to the address it is reached at`,
      }
    default:
      return {
        reason: 'not provisioned yet (a pool with a provider, no ssh.host)',
        action: `fleetkit node provision ${id}`,
      }
  }
}
