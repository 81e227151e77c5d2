// What the local Hetzner Cloud stub offers before anything is created: a few server types (x86
// and arm), the locations and system images, with the public API's field names.
import type { Image, Location, ServerType } from './hetzner-types.js'

export const STUB_LOCATIONS: Location[] = [
  {
    id: 1,
    name: 'fsn1',
    description: 'Falkenstein DC Park 1',
    country: 'DE',
    city: 'Falkenstein',
    network_zone: 'eu-central',
  },
  {
    id: 2,
    name: 'nbg1',
    description: 'Nuremberg DC Park 1',
    country: 'DE',
    city: 'Nuremberg',
    network_zone: 'eu-central',
  },
  {
    id: 3,
    name: 'hel1',
    description: 'Helsinki DC Park 1',
    country: 'FI',
    city: 'Helsinki',
    network_zone: 'eu-central',
  },
  { id: 4, name: 'ash', description: 'Ashburn, VA', country: 'US', city: 'Ashburn, VA', network_zone: 'us-east' },
]

function serverType(
  id: number,
  name: string,
  cores: number,
  memory: number,
  disk: number,
  architecture: 'x86' | 'arm',
  locations: string[],
): ServerType {
  return {
    id,
    name,
    cores,
    memory,
    disk,
    storage_type: 'local',
    cpu_type: name.startsWith('ccx') ? 'dedicated' : 'shared',
    architecture,
    deprecated: false,
    prices: locations.map((location) => ({ location, price_hourly: { net: '0.0100', gross: '0.0119' } })),
    locations: STUB_LOCATIONS.filter((l) => locations.includes(l.name)).map((l) => ({
      id: l.id,
      name: l.name,
      available: true,
      recommended: true,
      deprecation: null,
    })),
  }
}

export const STUB_SERVER_TYPES: ServerType[] = [
  serverType(104, 'cx22', 2, 4, 40, 'x86', ['fsn1', 'nbg1', 'hel1']),
  serverType(105, 'cx32', 4, 8, 80, 'x86', ['fsn1', 'nbg1', 'hel1']),
  serverType(106, 'cx42', 8, 16, 160, 'x86', ['fsn1', 'nbg1', 'hel1']),
  serverType(9, 'cpx31', 4, 8, 160, 'x86', ['fsn1', 'nbg1', 'hel1', 'ash']),
  serverType(95, 'ccx13', 2, 8, 80, 'x86', ['fsn1', 'nbg1', 'hel1', 'ash']),
  serverType(96, 'ccx23', 4, 16, 160, 'x86', ['fsn1', 'nbg1', 'hel1', 'ash']),
  serverType(45, 'cax11', 2, 4, 40, 'arm', ['fsn1', 'nbg1', 'hel1']),
  serverType(93, 'cax31', 8, 16, 160, 'arm', ['fsn1', 'nbg1', 'hel1']),
]

function systemImage(id: number, name: string, flavor: string, version: string, architecture: 'x86' | 'arm'): Image {
  return {
    id,
    type: 'system',
    status: 'available',
    name,
    description: `${flavor} ${version}`,
    architecture,
    os_flavor: flavor,
    os_version: version,
    labels: {},
  }
}

export const STUB_IMAGES: Image[] = [
  systemImage(114690387, 'debian-12', 'debian', '12', 'x86'),
  systemImage(114690389, 'debian-12', 'debian', '12', 'arm'),
  systemImage(226422817, 'debian-13', 'debian', '13', 'x86'),
  systemImage(226422819, 'debian-13', 'debian', '13', 'arm'),
  systemImage(161547269, 'ubuntu-24.04', 'ubuntu', '24.04', 'x86'),
  systemImage(161547270, 'ubuntu-24.04', 'ubuntu', '24.04', 'arm'),
]
