// Rule: RFC 5737 (IPv4) and RFC 3849 (IPv6) documentation ranges belong in examples, never in a
// real fleet; they are accepted only in a file that says so (top-level `example: true`).
import { BlockList, isIPv6 } from 'node:net'

import { overlapsDocumentationRange, parseIpv4, parseIpv4Cidr } from '../ipv4.js'
import { pointer } from '../json-pointer.js'
import type { DefinitionError } from '../types.js'
import { type DefinitionRule, semanticError } from './rule.js'

const IPV6_DOCUMENTATION = new BlockList()
IPV6_DOCUMENTATION.addSubnet('2001:db8::', 32, 'ipv6')

/** The documentation range `text` (an IPv4/IPv6 address or CIDR) falls in, or undefined. */
export function documentationRangeOf(text: string): string | undefined {
  const [address = '', prefixText] = text.split('/')
  // Every IPv6 address has a colon: an IPv4 address (most of a fleet's) skips isIPv6's long regex.
  if (address.includes(':') && isIPv6(address)) {
    // A CIDR broader than /32 that contains 2001:db8:: also covers the documentation range.
    const prefix = prefixText === undefined ? 128 : Number(prefixText)
    if (IPV6_DOCUMENTATION.check(address, 'ipv6')) return '2001:db8::/32'
    if (prefix < 32) {
      const list = new BlockList()
      list.addSubnet(address, prefix, 'ipv6')
      if (list.check('2001:db8::', 'ipv6')) return '2001:db8::/32'
    }
    return undefined
  }
  if (prefixText === undefined) {
    // An address is the one-address network it names (what `${address}/32` parses to).
    const single = parseIpv4(address)
    return single === undefined ? undefined : overlapsDocumentationRange({ network: single, size: 1 })
  }
  const cidr = parseIpv4Cidr(text)
  return cidr ? overlapsDocumentationRange(cidr) : undefined
}

/** True when `text` is a CIDR broader than the documentation range it touches: it holds the range, not sits in it. */
function containsRange(text: string, range: string): boolean {
  const [, prefixText] = text.split('/')
  if (prefixText === undefined) return false
  return Number(prefixText) < Number(range.split('/')[1])
}

export const documentationRangesRefused: DefinitionRule = ({ definition }) => {
  if (definition.example === true) return []
  const errors: DefinitionError[] = []
  // The pointer is built only for a value in a range: a fleet has thousands of node addresses.
  const check = (path: () => string, value: string) => {
    const range = documentationRangeOf(value)
    if (range === undefined) return
    errors.push(
      semanticError({
        code: 'DOCUMENTATION_RANGE_REFUSED',
        path: path(),
        expected: 'an address outside the documentation ranges (or a file marked example: true)',
        actual: value,
        message: containsRange(value, range)
          ? `${value} contains the documentation range ${range}; a real fleet cannot use it (an example fleet says example: true)`
          : `${value} is in the documentation range ${range}; a real fleet cannot use it (an example fleet says example: true)`,
      }),
    )
  }
  for (const [index, cidr] of definition.operators.cidrs.entries())
    check(() => pointer('operators', 'cidrs', index), cidr)
  for (const [name, pool] of Object.entries(definition.pools)) {
    const policy = pool.dockerNetworkPolicy
    if (!policy) continue
    check(() => pointer('pools', name, 'dockerNetworkPolicy', 'base'), policy.base)
    if (policy.defaultBridgeCidr !== undefined)
      check(() => pointer('pools', name, 'dockerNetworkPolicy', 'defaultBridgeCidr'), policy.defaultBridgeCidr)
  }
  for (let index = 0; index < definition.nodes.length; index++) {
    const node = definition.nodes[index]!
    if (node.ssh?.host !== undefined) check(() => pointer('nodes', index, 'ssh', 'host'), node.ssh.host)
  }
  return errors
}
