// The Hetzner Cloud API's resources as fleetkit reads them: the public field names, only the fields
// provisioning uses (the API sends more; they are kept, not typed).

export type Labels = Record<string, string>

export interface Action {
  id: number
  command: string
  status: 'running' | 'success' | 'error'
  progress: number
  started: string
  finished: string | null
  resources: { id: number; type: string }[]
  error: { code: string; message: string } | null
}

export interface Server {
  id: number
  name: string
  status: string
  created: string
  labels: Labels
  server_type: ServerType
  datacenter: { name: string; location: Location }
  image: Image | null
  public_net: {
    ipv4: { ip: string } | null
    ipv6: { ip: string } | null
    firewalls: { id: number; status: string }[]
  }
  private_net: { network: number; ip: string }[]
  placement_group: PlacementGroup | null
}

export interface ServerType {
  id: number
  name: string
  cores: number
  /** GB, a float. */
  memory: number
  /** GB. */
  disk: number
  storage_type: string
  cpu_type: string
  architecture: 'x86' | 'arm'
  deprecated?: boolean | null
  prices: unknown[]
  locations?: { id: number; name: string; available?: boolean; recommended?: boolean; deprecation: unknown }[]
}

export interface Location {
  id: number
  name: string
  description: string
  country: string
  city: string
  network_zone: string
}

export interface Image {
  id: number
  type: 'system' | 'app' | 'snapshot' | 'backup'
  status: string
  name: string | null
  description: string
  architecture: 'x86' | 'arm'
  os_flavor: string
  os_version: string | null
  labels: Labels
}

export interface SshKey {
  id: number
  name: string
  fingerprint: string
  public_key: string
  labels: Labels
}

export interface FirewallRule {
  direction: 'in' | 'out'
  protocol: 'tcp' | 'udp' | 'icmp' | 'esp' | 'gre'
  port?: string | null
  source_ips?: string[]
  destination_ips?: string[]
  description?: string | null
}

/** What a firewall applies to: servers, or every server a label selector matches. */
export type FirewallResource =
  { type: 'server'; server: { id: number } } | { type: 'label_selector'; label_selector: { selector: string } }

export interface Firewall {
  id: number
  name: string
  labels: Labels
  rules: FirewallRule[]
  applied_to: unknown[]
}

export interface PlacementGroup {
  id: number
  name: string
  labels: Labels
  type: 'spread'
  servers: number[]
}

export interface CreateServerRequest {
  name: string
  server_type: string
  image: string
  location?: string
  ssh_keys?: (string | number)[]
  /** At most 32,768 bytes. */
  user_data?: string
  /** Must hold fleetkit.node_id: the label an ambiguous create is looked up by. */
  labels: Labels
  firewalls?: { firewall: number }[]
  placement_group?: number
  public_net?: { enable_ipv4: boolean; enable_ipv6: boolean }
  start_after_create?: boolean
}

export interface CreateServerResult {
  server: Server
  /** create_server; absent when an existing server was adopted. */
  action?: Action
  next_actions: Action[]
  /** True when the create's answer was lost and the server was found by its fleetkit.node_id label. */
  adopted: boolean
}

export interface Volume {
  id: number
  /** Unique per project among volumes. */
  name: string
  created: string
  /** The server it is attached to; null when detached. */
  server: number | null
  location: Location
  /** GB, 10 to 10,240. */
  size: number
  /** Where the attached volume appears on the server: /dev/disk/by-id/scsi-0HC_Volume_<id>. */
  linux_device: string
  status: 'creating' | 'available'
  /** The filesystem the API formatted it with at creation (xfs, ext4), or null. */
  format: string | null
  labels: Labels
  protection: { delete: boolean }
}

export interface CreateVolumeRequest {
  name: string
  /** GB, 10 to 10,240. */
  size: number
  /** Must hold fleetkit.node_id: the label an ambiguous create is looked up by. */
  labels: Labels
  /** Where to create it (may be omitted when `server` is given: the server's location). */
  location?: string
  /** Attach it to this server once created. */
  server?: number
  /** Mount it on the server after attaching (only with `server`). */
  automount?: boolean
  format?: 'xfs' | 'ext4'
}

export interface CreateVolumeResult {
  volume: Volume
  /** create_volume; absent when an existing volume was adopted. */
  action?: Action
  next_actions: Action[]
  /** True when the create's answer was lost and the volume was found by its fleetkit.node_id label. */
  adopted: boolean
}
