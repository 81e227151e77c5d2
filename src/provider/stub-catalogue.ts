// What the local Hetzner Cloud stub offers before anything is created: a few server types (x86
// and arm), the locations, their datacenters and system images, with every field the API sends.
import type { StubDatacenter, StubImage, StubLocation, StubPrice, StubServerType } from './stub-resources.js'

export const STUB_LOCATIONS: StubLocation[] = [
  {
    id: 1,
    name: 'fsn1',
    description: 'Falkenstein DC Park 1',
    country: 'DE',
    city: 'Falkenstein',
    latitude: 50.47612,
    longitude: 12.370071,
    network_zone: 'eu-central',
  },
  {
    id: 2,
    name: 'nbg1',
    description: 'Nuremberg DC Park 1',
    country: 'DE',
    city: 'Nuremberg',
    latitude: 49.452102,
    longitude: 11.076665,
    network_zone: 'eu-central',
  },
  {
    id: 3,
    name: 'hel1',
    description: 'Helsinki DC Park 1',
    country: 'FI',
    city: 'Helsinki',
    latitude: 60.169855,
    longitude: 24.938379,
    network_zone: 'eu-central',
  },
  {
    id: 4,
    name: 'ash',
    description: 'Ashburn, VA',
    country: 'US',
    city: 'Ashburn, VA',
    latitude: 39.045821,
    longitude: -77.487073,
    network_zone: 'us-east',
  },
]

/** Net to gross at Germany's 19 % VAT, as the API's decimal strings (4 places). */
function price(net: number): StubPrice {
  return { net: net.toFixed(4), gross: (net * 1.19).toFixed(4) }
}

function serverType(
  id: number,
  name: string,
  cores: number,
  memory: number,
  disk: number,
  architecture: 'x86' | 'arm',
  locations: string[],
): StubServerType {
  return {
    id,
    name,
    description: name.toUpperCase(),
    cores,
    memory,
    disk,
    storage_type: 'local',
    cpu_type: name.startsWith('ccx') ? 'dedicated' : 'shared',
    architecture,
    deprecated: false,
    prices: locations.map((location) => ({ location, price_hourly: price(0.01), price_monthly: price(6.49) })),
    locations: STUB_LOCATIONS.filter((l) => locations.includes(l.name)).map((l) => ({
      id: l.id,
      name: l.name,
      available: true,
      recommended: true,
      deprecation: null,
    })),
  }
}

export const STUB_SERVER_TYPES: StubServerType[] = [
  serverType(104, 'cx22', 2, 4, 40, 'x86', ['fsn1', 'nbg1', 'hel1']),
  serverType(105, 'cx32', 4, 8, 80, 'x86', ['fsn1', 'nbg1', 'hel1']),
  serverType(106, 'cx42', 8, 16, 160, 'x86', ['fsn1', 'nbg1', 'hel1']),
  serverType(9, 'cpx31', 4, 8, 160, 'x86', ['fsn1', 'nbg1', 'hel1', 'ash']),
  serverType(95, 'ccx13', 2, 8, 80, 'x86', ['fsn1', 'nbg1', 'hel1', 'ash']),
  serverType(96, 'ccx23', 4, 16, 160, 'x86', ['fsn1', 'nbg1', 'hel1', 'ash']),
  serverType(45, 'cax11', 2, 4, 40, 'arm', ['fsn1', 'nbg1', 'hel1']),
  serverType(93, 'cax31', 8, 16, 160, 'arm', ['fsn1', 'nbg1', 'hel1']),
]

/** A location's one datacenter (`fsn1-dc14`), offering every type sold there. */
function datacenter(id: number, name: string, location: StubLocation): StubDatacenter {
  const offered = STUB_SERVER_TYPES.filter((t) => t.locations?.some((l) => l.name === location.name)).map((t) => t.id)
  return {
    id,
    name,
    description: `${location.city} DC ${name.split('-dc')[1]}`,
    location,
    server_types: { supported: offered, available: [...offered], available_for_migration: [...offered] },
  }
}

export const STUB_DATACENTERS: StubDatacenter[] = [
  datacenter(4, 'fsn1-dc14', STUB_LOCATIONS[0]!),
  datacenter(2, 'nbg1-dc3', STUB_LOCATIONS[1]!),
  datacenter(3, 'hel1-dc2', STUB_LOCATIONS[2]!),
  datacenter(5, 'ash-dc1', STUB_LOCATIONS[3]!),
]

function systemImage(
  id: number,
  name: string,
  flavor: string,
  version: string,
  architecture: 'x86' | 'arm',
): StubImage {
  return {
    id,
    type: 'system',
    status: 'available',
    name,
    description: `${flavor} ${version}`,
    image_size: null,
    disk_size: 5,
    created: '2024-01-01T00:00:00+00:00',
    created_from: null,
    bound_to: null,
    architecture,
    os_flavor: flavor,
    os_version: version,
    rapid_deploy: true,
    protection: { delete: false },
    deprecated: null,
    deleted: null,
    labels: {},
  }
}

export const STUB_IMAGES: StubImage[] = [
  systemImage(114690387, 'debian-12', 'debian', '12', 'x86'),
  systemImage(114690389, 'debian-12', 'debian', '12', 'arm'),
  systemImage(226422817, 'debian-13', 'debian', '13', 'x86'),
  systemImage(226422819, 'debian-13', 'debian', '13', 'arm'),
  systemImage(161547269, 'ubuntu-24.04', 'ubuntu', '24.04', 'x86'),
  systemImage(161547270, 'ubuntu-24.04', 'ubuntu', '24.04', 'arm'),
]
