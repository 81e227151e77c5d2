// The Hetzner Cloud API's error codes (`{"error": {"code": ...}}`), one type for the client that reads
// them (hetzner-errors.ts) and the stub that answers them (stub-errors.ts), so neither can use a code
// the other does not know. From hcloud-go's hcloud/error.go (Debian golang-github-hetznercloud-hcloud-go-dev
// 1.35.3) and the API reference's error table (the codes hcloud-go 1.35 does not name are marked).

/** Every code the API documents, general first, then by resource. */
export type HetznerErrorCode =
  // General
  | 'service_error'
  | 'rate_limit_exceeded'
  | 'unknown_error'
  | 'not_found'
  | 'invalid_input'
  | 'forbidden'
  | 'json_error'
  | 'locked'
  | 'resource_limit_exceeded'
  | 'resource_unavailable'
  | 'uniqueness_error'
  | 'protected'
  | 'maintenance'
  | 'conflict'
  | 'robot_unavailable'
  | 'resource_locked'
  | 'unsupported_error'
  // The API reference's, not in hcloud-go 1.35's list
  | 'unauthorized'
  | 'token_readonly'
  | 'server_error'
  | 'unavailable'
  | 'timeout'
  // Servers
  | 'invalid_server_type'
  | 'server_not_stopped'
  | 'networks_overlap'
  | 'placement_error'
  | 'server_already_attached'
  // Networks
  | 'ip_not_available'
  | 'no_subnet_available'
  | 'vswitch_id_already_used'
  // Volumes
  | 'no_space_left_in_location'
  | 'volume_already_attached'
  // Firewalls
  | 'firewall_already_applied'
  | 'firewall_already_removed'
  | 'incompatible_network_type'
  | 'resource_in_use'
  | 'server_already_added'
  | 'firewall_resource_not_found'
  // Listed by later hcloud-go releases
  | 'firewall_managed_by_label_selector'
