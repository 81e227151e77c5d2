// IPv4 address and CIDR arithmetic for the docker network policy and the documentation
// range rule. Addresses are unsigned 32-bit numbers; no dependency needed for this much.

export interface Ipv4Cidr {
  /** The address as written (for an interface address this is not the network base). */
  address: number
  prefix: number
  /** First address of the network (host bits zero). */
  network: number
  /** Number of addresses in the network (2^(32-prefix)). */
  size: number
}

const OCTETS = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/

export function parseIpv4(text: string): number | undefined {
  const m = OCTETS.exec(text)
  if (!m) return undefined
  let value = 0
  for (let i = 1; i <= 4; i++) {
    const part = m[i]!
    if (part.length > 1 && part.startsWith('0')) return undefined
    const octet = Number(part)
    if (octet > 255) return undefined
    value = value * 256 + octet
  }
  return value
}

export function parseIpv4Cidr(text: string): Ipv4Cidr | undefined {
  const slash = text.indexOf('/')
  if (slash < 0) return undefined
  const address = parseIpv4(text.slice(0, slash))
  const prefixText = text.slice(slash + 1)
  if (address === undefined || !/^\d{1,2}$/.test(prefixText)) return undefined
  const prefix = Number(prefixText)
  if (prefix > 32) return undefined
  const size = 2 ** (32 - prefix)
  const network = address - (address % size)
  return { address, prefix, network, size }
}

export function formatIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.')
}

export function formatCidr(cidr: Pick<Ipv4Cidr, 'network' | 'prefix'>): string {
  return `${formatIpv4(cidr.network)}/${cidr.prefix}`
}

export function cidrsOverlap(a: Pick<Ipv4Cidr, 'network' | 'size'>, b: Pick<Ipv4Cidr, 'network' | 'size'>): boolean {
  return a.network < b.network + b.size && b.network < a.network + a.size
}

/** RFC 5737 TEST-NET-1/2/3: documentation only, never a real network. */
const IPV4_DOCUMENTATION_RANGES: readonly Ipv4Cidr[] = ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24'].map(
  (text) => parseIpv4Cidr(text)!,
)

export function overlapsDocumentationRange(cidr: Pick<Ipv4Cidr, 'network' | 'size'>): string | undefined {
  const hit = IPV4_DOCUMENTATION_RANGES.find((range) => cidrsOverlap(range, cidr))
  return hit === undefined ? undefined : formatCidr(hit)
}
