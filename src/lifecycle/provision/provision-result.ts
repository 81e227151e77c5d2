// What `fleetkit node provision` reports from its row (src/lifecycle/provision/node-provision.ts runs the steps),
// and the coded ends of its waits.
import { FleetkitError } from '../../checks/fleetkit-error.js'
import { provisionedAddress } from '../../render/node-address.js'
import { sshKeyFingerprint } from '../../render/ssh-host-key.js'
import type { VolumeState } from '../../store/nodes/nodes.js'
import type { ProvisionRow } from '../../store/provider/provisioning.js'
import type { CreateOutcome } from './provision-create.js'

export interface ProvisionResult {
  /** @pattern ^[a-z0-9][a-z0-9-]{0,62}$ */
  node: string
  pool: string
  state: 'awaiting_enrollment' | 'enrolled'
  serverId: number | null
  region: string | null
  serverType: string | null
  image: string | null
  publicIpv4: string | null
  publicIpv6: string | null
  /**
   * Where fleetkit inventory, sync and drift reach the node: the server's public IPv4, else its public
   * IPv6 (the ::1 of its /64); null until the server runs. fleet.yaml needs no ssh.host for it.
   */
  sshAddress: string | null
  /** The pool firewall attached in the create request (null when this run created nothing). */
  firewallId: number | null
  /** True when the server was found by its fleetkit.node_id label instead of created by this run. */
  adopted: boolean
  /** resource_unavailable moves from one (region, type) candidate to the next. */
  placementMoves: { from: { region: string; type: string }; to: { region: string; type: string } }[]
  capacity: { cpu: number | null; memoryMib: number | null; diskGib: number | null }
  /** The Hetzner volume of `--volume SIZE`: the device the data_volume role formats and mounts. */
  volume: {
    /**
     * Null until the provider created it.
     * @asType integer
     * @nullable
     */
    id: number | null
    /**
     * @minimum 10
     * @maximum 10240
     * @asType integer
     */
    sizeGb: number
    state: VolumeState
    /** @pattern ^/dev/ */
    linuxDevice: string | null
    /** True when this run found it by its fleetkit.node_id label instead of creating it. */
    adopted: boolean
  } | null
  /**
   * The SSH host key pinned for the node in the state (its seed's, for a node that declares ssh.user),
   * where ssh reads it: fleet.yaml needs no hostKey for it. Null when none is pinned.
   */
  hostKey: {
    /** @pattern ^ssh- */
    publicKey: string
    /**
     * As `ssh-keygen -lf` prints it.
     * @pattern ^SHA256:[A-Za-z0-9+/]{43}$
     */
    fingerprint: string
  } | null
  /**
   * When the enrollment secret expires (the secret itself is never reported).
   * @format date-time
   */
  secretExpiresAt: string | null
}

export function result(
  row: ProvisionRow,
  outcome: Partial<CreateOutcome> & { volumeAdopted?: boolean },
): ProvisionResult {
  return {
    node: row.id,
    pool: row.pool,
    state: row.provisionState === 'enrolled' ? 'enrolled' : 'awaiting_enrollment',
    serverId: row.providerServerId === null ? null : Number(row.providerServerId),
    region: row.region,
    serverType: row.serverType,
    image: row.image,
    publicIpv4: row.publicIpv4,
    publicIpv6: row.publicIpv6,
    sshAddress: provisionedAddress(row),
    firewallId: outcome.firewallId ?? null,
    adopted: outcome.adopted ?? false,
    placementMoves: outcome.moves ?? [],
    capacity: { cpu: row.capacityCpu, memoryMib: row.capacityMemoryMib, diskGib: row.capacityDiskGib },
    volume:
      row.volumeState === null || row.volumeSizeGb === null
        ? null
        : {
            id: row.providerVolumeId === null ? null : Number(row.providerVolumeId),
            sizeGb: row.volumeSizeGb,
            state: row.volumeState,
            linuxDevice: row.volumeLinuxDevice,
            adopted: outcome.volumeAdopted ?? false,
          },
    hostKey: row.hostKeyPublic
      ? { publicKey: row.hostKeyPublic, fingerprint: sshKeyFingerprint(row.hostKeyPublic) }
      : null,
    secretExpiresAt: row.enrollmentSecretExpiresAt?.toISOString() ?? null,
  }
}

export function waitTimeout(nodeId: string, what: string): FleetkitError {
  return new FleetkitError('PROVISION_WAIT_TIMEOUT', `stopped waiting for ${what}; the run stays open`, {
    actions: [`fleetkit node provision --resume ${nodeId}`, `fleetkit node show ${nodeId}`],
    data: { node: nodeId },
  })
}

export function expired(nodeId: string, row: ProvisionRow): FleetkitError {
  return new FleetkitError(
    'ENROLLMENT_EXPIRED',
    `the enrollment secret of ${nodeId} expired before its agent enrolled: the node is failed and its server is left for inspection`,
    {
      actions: [
        `fleetkit node decommission ${nodeId}   (retires it and deletes its server)`,
        `fleetkit node provision NEW-ID`,
      ],
      data: { node: nodeId, serverId: row.providerServerId },
    },
  )
}
