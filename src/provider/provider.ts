// The Provider interface: the operations fleetkit's provisioning and lifecycle code uses of a cloud
// (servers, volumes, firewalls, SSH keys, placement groups, actions), so that code depends on this and
// not on a client class. HetznerClient (hetzner.ts) implements it, checked by the compiler
// (`implements Provider`). The resources keep the Hetzner Cloud API's public field names
// (hetzner-types.ts), and its error codes are one type shared by the client and the stub
// (hetzner-error-codes.ts): Hetzner Cloud is the one provider.
import type {
  Action,
  CreateServerRequest,
  CreateServerResult,
  CreateVolumeRequest,
  CreateVolumeResult,
  Firewall,
  FirewallRule,
  Image,
  Labels,
  Location,
  PlacementGroup,
  Server,
  ServerType,
  SshKey,
  Volume,
} from './hetzner-types.js'

export interface ListFilter {
  labelSelector?: string
  name?: string
}

export interface Provider {
  // Servers
  listServers(filter?: ListFilter & { status?: string }): Promise<Server[]>
  /** The server, or undefined when it does not exist. */
  getServer(id: number): Promise<Server | undefined>
  /** Sent once; a lost answer or a name held by the node's own server is adopted, never created twice. */
  createServer(request: CreateServerRequest): Promise<CreateServerResult>
  /** The node's server before a create: by its labels, or holding its name with them. */
  findOwnServer(name: string, labels: Labels): Promise<Server | undefined>
  /** Undefined when the server was already gone, so a delete runs again safely. */
  deleteServer(id: number): Promise<Action | undefined>

  // Volumes
  listVolumes(filter?: ListFilter): Promise<Volume[]>
  getVolume(id: number): Promise<Volume | undefined>
  createVolume(request: CreateVolumeRequest): Promise<CreateVolumeResult>
  findOwnVolume(name: string, labels: Labels): Promise<Volume | undefined>
  attachVolume(id: number, serverId: number, automount?: boolean): Promise<Action>
  detachVolume(id: number): Promise<Action>
  /** A volume already gone counts as deleted. */
  deleteVolume(id: number): Promise<void>

  // Catalogue
  listServerTypes(filter?: { name?: string }): Promise<ServerType[]>
  listLocations(filter?: { name?: string }): Promise<Location[]>
  listImages(filter?: ListFilter & { type?: string; architecture?: 'x86' | 'arm' }): Promise<Image[]>

  // SSH keys
  listSshKeys(filter?: ListFilter): Promise<SshKey[]>
  createSshKey(request: { name: string; public_key: string; labels?: Labels }): Promise<SshKey>

  // Firewalls
  listFirewalls(filter?: ListFilter): Promise<Firewall[]>
  createFirewall(request: {
    name: string
    labels?: Labels
    rules?: FirewallRule[]
  }): Promise<{ firewall: Firewall; actions: Action[] }>
  /** Replaces every rule with `rules`: the same call twice is the same firewall. */
  setFirewallRules(id: number, rules: FirewallRule[]): Promise<Action[]>

  // Placement groups
  listPlacementGroups(filter?: ListFilter): Promise<PlacementGroup[]>
  createPlacementGroup(request: { name: string; labels?: Labels }): Promise<PlacementGroup>

  // Actions
  /** Polls until every action finished; PROVIDER_ACTION_FAILED names the first that ended in error. */
  waitForActions(
    ids: readonly number[],
    options?: { pollMs?: number; signal?: AbortSignal; onProgress?: (running: number) => void },
  ): Promise<Action[]>
}
