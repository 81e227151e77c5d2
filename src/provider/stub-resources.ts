// The local Hetzner Cloud stub's resources as the API sends them: every field hcloud-go's hcloud/schema
// structs name (test/support/hcloud-schema.ts checks the answers), where the client's types in
// hetzner-types.ts keep only what provisioning reads. Each extends the client's type, so what the
// stub serves is still what the client reads.
import type {
  Firewall,
  FirewallResource,
  FirewallRule,
  Image,
  Location,
  PlacementGroup,
  Server,
  ServerType,
  SshKey,
  Volume,
} from './hetzner-types.js'

/** A net and a gross amount, as decimal strings. */
export interface StubPrice {
  net: string
  gross: string
}

export interface StubLocation extends Location {
  latitude: number
  longitude: number
}

export interface StubDatacenter {
  id: number
  name: string
  description: string
  location: StubLocation
  /** Server type IDs: offered here, orderable now, and (later API) migratable to. */
  server_types: { supported: number[]; available: number[]; available_for_migration: number[] }
}

export interface StubServerType extends ServerType {
  description: string
  prices: { location: string; price_hourly: StubPrice; price_monthly: StubPrice }[]
}

export interface StubImage extends Image {
  /** GB; null for a system image. */
  image_size: number | null
  disk_size: number
  created: string
  created_from: { id: number; name: string } | null
  bound_to: number | null
  rapid_deploy: boolean
  protection: { delete: boolean }
  deprecated: string | null
  deleted: string | null
}

export interface StubPlacementGroup extends PlacementGroup {
  created: string
}

export interface StubServer extends Server {
  server_type: StubServerType
  datacenter: StubDatacenter
  image: StubImage | null
  public_net: {
    ipv4: { id: number; ip: string; blocked: boolean; dns_ptr: string } | null
    ipv6: { id: number; ip: string; blocked: boolean; dns_ptr: { ip: string; dns_ptr: string }[] } | null
    floating_ips: number[]
    firewalls: { id: number; status: string }[]
  }
  private_net: { network: number; ip: string; alias_ips: string[]; mac_address: string }[]
  /** Bytes a month. */
  included_traffic: number
  outgoing_traffic: number | null
  ingoing_traffic: number | null
  backup_window: string | null
  rescue_enabled: boolean
  iso: null
  locked: boolean
  protection: { delete: boolean; rebuild: boolean }
  /** IDs of the attached volumes. */
  volumes: number[]
  /** GB. */
  primary_disk_size: number
  placement_group: StubPlacementGroup | null
}

export interface StubSshKey extends SshKey {
  created: string
}

/** A rule as the API answers it: every field, [] and null where the request left one out. */
export interface StubFirewallRule extends FirewallRule {
  source_ips: string[]
  destination_ips: string[]
  port: string | null
  description: string | null
}

export interface StubFirewall extends Firewall {
  created: string
  rules: StubFirewallRule[]
  applied_to: FirewallResource[]
}

export interface StubVolume extends Volume {
  location: StubLocation
}
