// hcloud-go's hcloud/schema structs, transcribed: the wire format of each resource and answer the
// Hetzner stub serves, field by field, and a checker that lists what an answer lacks or mistypes.
//
// Source: Debian's golang-github-hetznercloud-hcloud-go-dev 1.35.3-1 (hcloud/hcloud.go says Version
// 1.35.2), /usr/share/gocode/src/github.com/hetznercloud/hcloud-go/hcloud/schema/<file>.go; each
// struct names its file. Go types map as: int, uint64 → int; float32, float64 → float; string → string;
// bool → bool; time.Time → time (an RFC 3339 string); *T → T or null; []T → array; map[string]string →
// labels; json.RawMessage → any JSON. A Go value type the API reference documents as nullable (a
// server's public_net.ipv4, an image's deprecated, meta.pagination.next_page: Go reads null as the zero
// value) is nullable here too, with the reason. `omitempty` fields are optional, except where the API
// always sends the field in its answers (a firewall rule's source_ips, destination_ips, port and
// description: omitempty is for requests). Fields the API sends beyond hcloud-go 1.35's structs
// (a server type's architecture and locations, a volume's format) are allowed and not checked.

export type Shape =
  | 'int'
  | 'float'
  | 'string'
  | 'bool'
  | 'time'
  | 'labels'
  | 'any'
  | { nullable: Shape; why?: string }
  | { optional: Shape }
  | { array: Shape }
  | Struct

export interface Struct {
  /** The Go struct and its file under hcloud/schema/, or `inline` for an anonymous struct. */
  go: string
  file: string
  fields: Record<string, Shape>
}

const nullable = (shape: Shape, why?: string): Shape => (why ? { nullable: shape, why } : { nullable: shape })
const array = (shape: Shape): Shape => ({ array: shape })
const optional = (shape: Shape): Shape => ({ optional: shape })

// action.go
export const ActionResourceReference: Struct = {
  go: 'ActionResourceReference',
  file: 'action.go',
  fields: { id: 'int', type: 'string' },
}
export const ActionError: Struct = {
  go: 'ActionError',
  file: 'action.go',
  fields: { code: 'string', message: 'string' },
}
export const Action: Struct = {
  go: 'Action',
  file: 'action.go',
  fields: {
    id: 'int',
    status: 'string',
    command: 'string',
    progress: 'int',
    started: 'time',
    finished: nullable('time'),
    error: nullable(ActionError),
    resources: array(ActionResourceReference),
  },
}

// meta.go
export const MetaPagination: Struct = {
  go: 'MetaPagination',
  file: 'meta.go',
  fields: {
    page: 'int',
    per_page: 'int',
    previous_page: nullable('int', 'the API reference: null on the first page'),
    next_page: nullable('int', 'the API reference: null on the last page'),
    last_page: 'int',
    total_entries: 'int',
  },
}
export const Meta: Struct = { go: 'Meta', file: 'meta.go', fields: { pagination: nullable(MetaPagination) } }

// error.go
export const Error: Struct = {
  go: 'Error',
  file: 'error.go',
  fields: { code: 'string', message: 'string', details: 'any' },
}
export const ErrorResponse: Struct = { go: 'ErrorResponse', file: 'error.go', fields: { error: Error } }
export const ErrorDetailsInvalidInput: Struct = {
  go: 'ErrorDetailsInvalidInput',
  file: 'error.go',
  fields: {
    fields: array({ go: 'inline', file: 'error.go', fields: { name: 'string', messages: array('string') } }),
  },
}

// location.go
export const Location: Struct = {
  go: 'Location',
  file: 'location.go',
  fields: {
    id: 'int',
    name: 'string',
    description: 'string',
    country: 'string',
    city: 'string',
    latitude: 'float',
    longitude: 'float',
    network_zone: 'string',
  },
}

// datacenter.go
export const Datacenter: Struct = {
  go: 'Datacenter',
  file: 'datacenter.go',
  fields: {
    id: 'int',
    name: 'string',
    description: 'string',
    location: Location,
    server_types: {
      go: 'inline',
      file: 'datacenter.go',
      fields: { supported: array('int'), available: array('int') },
    },
  },
}

// pricing.go
export const Price: Struct = { go: 'Price', file: 'pricing.go', fields: { net: 'string', gross: 'string' } }
export const PricingServerTypePrice: Struct = {
  go: 'PricingServerTypePrice',
  file: 'pricing.go',
  fields: { location: 'string', price_hourly: Price, price_monthly: Price },
}

// server_type.go
export const ServerType: Struct = {
  go: 'ServerType',
  file: 'server_type.go',
  fields: {
    id: 'int',
    name: 'string',
    description: 'string',
    cores: 'int',
    memory: 'float',
    disk: 'int',
    storage_type: 'string',
    cpu_type: 'string',
    prices: array(PricingServerTypePrice),
  },
}

// image.go
export const ImageProtection: Struct = { go: 'ImageProtection', file: 'image.go', fields: { delete: 'bool' } }
export const ImageCreatedFrom: Struct = {
  go: 'ImageCreatedFrom',
  file: 'image.go',
  fields: { id: 'int', name: 'string' },
}
export const Image: Struct = {
  go: 'Image',
  file: 'image.go',
  fields: {
    id: 'int',
    status: 'string',
    type: 'string',
    name: nullable('string'),
    description: 'string',
    image_size: nullable('float'),
    disk_size: 'float',
    created: 'time',
    created_from: nullable(ImageCreatedFrom),
    bound_to: nullable('int'),
    os_flavor: 'string',
    os_version: nullable('string'),
    rapid_deploy: 'bool',
    protection: ImageProtection,
    deprecated: nullable('time', 'the API reference: null unless the image is deprecated'),
    deleted: nullable('time', 'the API reference: null unless the image is deleted'),
    labels: 'labels',
  },
}

// iso.go
export const ISO: Struct = {
  go: 'ISO',
  file: 'iso.go',
  fields: {
    id: 'int',
    name: 'string',
    description: 'string',
    type: 'string',
    deprecated: nullable('time', 'the API reference: null unless the ISO is deprecated'),
  },
}

// placement_group.go
export const PlacementGroup: Struct = {
  go: 'PlacementGroup',
  file: 'placement_group.go',
  fields: { id: 'int', name: 'string', labels: 'labels', created: 'time', servers: array('int'), type: 'string' },
}

// server.go
export const ServerProtection: Struct = {
  go: 'ServerProtection',
  file: 'server.go',
  fields: { delete: 'bool', rebuild: 'bool' },
}
export const ServerPublicNetIPv4: Struct = {
  go: 'ServerPublicNetIPv4',
  file: 'server.go',
  fields: { id: 'int', ip: 'string', blocked: 'bool', dns_ptr: 'string' },
}
export const ServerPublicNetIPv6DNSPtr: Struct = {
  go: 'ServerPublicNetIPv6DNSPtr',
  file: 'server.go',
  fields: { ip: 'string', dns_ptr: 'string' },
}
export const ServerPublicNetIPv6: Struct = {
  go: 'ServerPublicNetIPv6',
  file: 'server.go',
  fields: { id: 'int', ip: 'string', blocked: 'bool', dns_ptr: array(ServerPublicNetIPv6DNSPtr) },
}
export const ServerFirewall: Struct = {
  go: 'ServerFirewall',
  file: 'server.go',
  fields: { id: 'int', status: 'string' },
}
export const ServerPublicNet: Struct = {
  go: 'ServerPublicNet',
  file: 'server.go',
  fields: {
    ipv4: nullable(ServerPublicNetIPv4, 'the API reference: null for a server without IPv4'),
    ipv6: nullable(ServerPublicNetIPv6, 'the API reference: null for a server without IPv6'),
    floating_ips: array('int'),
    firewalls: array(ServerFirewall),
  },
}
export const ServerPrivateNet: Struct = {
  go: 'ServerPrivateNet',
  file: 'server.go',
  fields: { network: 'int', ip: 'string', alias_ips: array('string'), mac_address: 'string' },
}
export const Server: Struct = {
  go: 'Server',
  file: 'server.go',
  fields: {
    id: 'int',
    name: 'string',
    status: 'string',
    created: 'time',
    public_net: ServerPublicNet,
    private_net: array(ServerPrivateNet),
    server_type: ServerType,
    included_traffic: 'int',
    outgoing_traffic: nullable('int'),
    ingoing_traffic: nullable('int'),
    backup_window: nullable('string'),
    rescue_enabled: 'bool',
    iso: nullable(ISO),
    locked: 'bool',
    datacenter: Datacenter,
    image: nullable(Image),
    protection: ServerProtection,
    labels: 'labels',
    volumes: array('int'),
    primary_disk_size: 'int',
    placement_group: nullable(PlacementGroup),
  },
}

// ssh_key.go
export const SSHKey: Struct = {
  go: 'SSHKey',
  file: 'ssh_key.go',
  fields: { id: 'int', name: 'string', fingerprint: 'string', public_key: 'string', labels: 'labels', created: 'time' },
}

// volume.go
export const VolumeProtection: Struct = { go: 'VolumeProtection', file: 'volume.go', fields: { delete: 'bool' } }
export const Volume: Struct = {
  go: 'Volume',
  file: 'volume.go',
  fields: {
    id: 'int',
    name: 'string',
    server: nullable('int'),
    status: 'string',
    location: Location,
    size: 'int',
    protection: VolumeProtection,
    labels: 'labels',
    linux_device: 'string',
    created: 'time',
  },
}

// firewall.go
export const FirewallRule: Struct = {
  go: 'FirewallRule',
  file: 'firewall.go',
  fields: {
    direction: 'string',
    source_ips: array('string'),
    destination_ips: array('string'),
    protocol: 'string',
    port: nullable('string', 'the API reference: null for a protocol without ports'),
    description: nullable('string'),
  },
}
export const FirewallResource: Struct = {
  go: 'FirewallResource',
  file: 'firewall.go',
  fields: {
    type: 'string',
    server: optional({ go: 'FirewallResourceServer', file: 'firewall.go', fields: { id: 'int' } }),
    label_selector: optional({
      go: 'FirewallResourceLabelSelector',
      file: 'firewall.go',
      fields: { selector: 'string' },
    }),
  },
}
export const Firewall: Struct = {
  go: 'Firewall',
  file: 'firewall.go',
  fields: {
    id: 'int',
    name: 'string',
    labels: 'labels',
    created: 'time',
    rules: array(FirewallRule),
    applied_to: array(FirewallResource),
  },
}

// The answers: one resource (`...GetResponse`), a list with its meta (`...ListResponse` + `MetaResponse`),
// and what a create or an action returns.
const answer = (go: string, file: string, fields: Record<string, Shape>): Struct => ({ go, file, fields })
const list = (go: string, file: string, key: string, item: Shape): Struct =>
  answer(go, file, { [key]: array(item), meta: Meta })

export const ANSWERS = {
  ActionGetResponse: answer('ActionGetResponse', 'action.go', { action: Action }),
  ActionListResponse: list('ActionListResponse', 'action.go', 'actions', Action),
  LocationGetResponse: answer('LocationGetResponse', 'location.go', { location: Location }),
  LocationListResponse: list('LocationListResponse', 'location.go', 'locations', Location),
  DatacenterGetResponse: answer('DatacenterGetResponse', 'datacenter.go', { datacenter: Datacenter }),
  DatacenterListResponse: list('DatacenterListResponse', 'datacenter.go', 'datacenters', Datacenter),
  ServerTypeGetResponse: answer('ServerTypeGetResponse', 'server_type.go', { server_type: ServerType }),
  ServerTypeListResponse: list('ServerTypeListResponse', 'server_type.go', 'server_types', ServerType),
  ImageGetResponse: answer('ImageGetResponse', 'image.go', { image: Image }),
  ImageListResponse: list('ImageListResponse', 'image.go', 'images', Image),
  ServerGetResponse: answer('ServerGetResponse', 'server.go', { server: Server }),
  ServerListResponse: list('ServerListResponse', 'server.go', 'servers', Server),
  ServerCreateResponse: answer('ServerCreateResponse', 'server.go', {
    server: Server,
    action: Action,
    root_password: nullable('string'),
    next_actions: array(Action),
  }),
  // What DELETE /servers/{id} answers: hcloud-go 1.35 has no struct of its own for it (it reads the action).
  ServerDeleteResponse: answer('inline', 'server.go', { action: Action }),
  SSHKeyGetResponse: answer('SSHKeyGetResponse', 'ssh_key.go', { ssh_key: SSHKey }),
  SSHKeyListResponse: list('SSHKeyListResponse', 'ssh_key.go', 'ssh_keys', SSHKey),
  SSHKeyCreateResponse: answer('SSHKeyCreateResponse', 'ssh_key.go', { ssh_key: SSHKey }),
  PlacementGroupGetResponse: answer('PlacementGroupGetResponse', 'placement_group.go', {
    placement_group: PlacementGroup,
  }),
  PlacementGroupListResponse: list(
    'PlacementGroupListResponse',
    'placement_group.go',
    'placement_groups',
    PlacementGroup,
  ),
  PlacementGroupCreateResponse: answer('PlacementGroupCreateResponse', 'placement_group.go', {
    placement_group: PlacementGroup,
    action: nullable(Action),
  }),
  VolumeGetResponse: answer('VolumeGetResponse', 'volume.go', { volume: Volume }),
  VolumeListResponse: list('VolumeListResponse', 'volume.go', 'volumes', Volume),
  VolumeCreateResponse: answer('VolumeCreateResponse', 'volume.go', {
    volume: Volume,
    action: nullable(Action),
    next_actions: array(Action),
  }),
  VolumeActionAttachVolumeResponse: answer('VolumeActionAttachVolumeResponse', 'volume.go', { action: Action }),
  VolumeActionDetachVolumeResponse: answer('VolumeActionDetachVolumeResponse', 'volume.go', { action: Action }),
  FirewallGetResponse: answer('FirewallGetResponse', 'firewall.go', { firewall: Firewall }),
  FirewallListResponse: list('FirewallListResponse', 'firewall.go', 'firewalls', Firewall),
  FirewallCreateResponse: answer('FirewallCreateResponse', 'firewall.go', {
    firewall: Firewall,
    actions: array(Action),
  }),
  FirewallActionSetRulesResponse: answer('FirewallActionSetRulesResponse', 'firewall.go', { actions: array(Action) }),
  FirewallActionApplyToResourcesResponse: answer('FirewallActionApplyToResourcesResponse', 'firewall.go', {
    actions: array(Action),
  }),
  ErrorResponse,
} satisfies Record<string, Struct>

function isStruct(shape: Shape): shape is Struct {
  return typeof shape === 'object' && 'fields' in shape
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

/**
 * What `value` lacks or mistypes against `shape`, one line each (`$.server.public_net.ipv4.id: missing`);
 * empty when it matches. Fields beyond the struct's are not reported.
 */
export function shapeProblems(value: unknown, shape: Shape, path = '$'): string[] {
  if (typeof shape === 'object' && 'optional' in shape) return shapeProblems(value, shape.optional, path)
  if (typeof shape === 'object' && 'nullable' in shape) {
    return value === null ? [] : shapeProblems(value, shape.nullable, path)
  }
  const got = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value
  const wrong = (want: string) => [`${path}: ${want} expected, got ${got === 'object' ? 'an object' : got}`]
  if (typeof shape === 'object' && 'array' in shape) {
    if (!Array.isArray(value)) return wrong('an array')
    return value.flatMap((item, i) => shapeProblems(item, shape.array, `${path}[${i}]`))
  }
  if (isStruct(shape)) {
    if (got !== 'object') return wrong(`an object (${shape.go})`)
    const record = value as Record<string, unknown>
    return Object.entries(shape.fields).flatMap(([key, field]) => {
      if (!(key in record)) {
        return typeof field === 'object' && 'optional' in field ? [] : [`${path}.${key}: missing (${shape.go})`]
      }
      return shapeProblems(record[key], field, `${path}.${key}`)
    })
  }
  switch (shape) {
    case 'any':
      return value === undefined ? wrong('a JSON value') : []
    case 'int':
      return Number.isInteger(value) ? [] : wrong('an integer')
    case 'float':
      return typeof value === 'number' && Number.isFinite(value) ? [] : wrong('a number')
    case 'string':
      return typeof value === 'string' ? [] : wrong('a string')
    case 'bool':
      return typeof value === 'boolean' ? [] : wrong('a boolean')
    case 'time':
      return typeof value === 'string' && RFC3339.test(value) ? [] : wrong('an RFC 3339 time')
    case 'labels':
      return got === 'object' && Object.values(value as object).every((v) => typeof v === 'string')
        ? []
        : wrong('labels (string to string)')
  }
}
