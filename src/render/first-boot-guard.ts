// What either seed does before sshd first listens: br_netfilter with the bridge sysctls, and a
// minimal inet fleetkit nftables table (loopback, established, ICMP, SSH from the operators,
// everything outbound), so a host is never on the network unguarded until its first sync. The
// firewall role replaces the same table under its dead-man switch; the br_netfilter role finds
// its own files already in place.
import { cidrValue, portValue } from './values.js'

export interface FirstBootGuardInput {
  /** operators.cidrs: the ranges SSH is admitted from (the firewall role's firewall_operator_cidrs). */
  operatorCidrs: readonly string[]
  /** The node's ssh.port (default 22). */
  sshPort?: number
  /** exposure.publicSsh (fleet, pool and node merged): SSH from everywhere, as the role renders it. */
  publicSsh?: boolean
}

/** Where the firewall role keeps its boot rules: the seed writes its table there, so the role's first
 * apply saves it as the rules its dead-man switch restores (the host is never left open on a rollback). */
const FIREWALL_RULES_PATH = '/etc/fleetkit/firewall.nft'
/** The files and values ansible/roles/br_netfilter writes (defaults/main.yml), byte for byte, so its
 * first run finds them unchanged. */
export const BR_NETFILTER_MODULES_FILE = '/etc/modules-load.d/fleetkit.conf'
export const BR_NETFILTER_MODULES_CONTENT =
  '# Managed by fleetkit (ansible/roles/br_netfilter): loads br_netfilter at boot.\nbr_netfilter\n'
export const BR_NETFILTER_SYSCTL_FILE = '/etc/sysctl.d/90-fleetkit.conf'
export const BR_NETFILTER_SYSCTLS = ['net.bridge.bridge-nf-call-iptables', 'net.bridge.bridge-nf-call-ip6tables']

const DEFAULT_SSH_PORT = 22

/** The seed's nftables ruleset: one atomic transaction that creates, empties and fills inet fleetkit. */
export function firstBootRuleset(input: FirstBootGuardInput): string {
  const cidrs = input.operatorCidrs.map((c, i) => cidrValue(`operators.cidrs[${i}]`, c))
  const port = portValue('ssh.port', input.sshPort ?? DEFAULT_SSH_PORT)
  const v4 = cidrs.filter((c) => !c.includes(':'))
  const v6 = cidrs.filter((c) => c.includes(':'))
  const set = (name: string, type: string, elements: string[]) =>
    elements.length === 0
      ? []
      : [
          `\tset ${name} {`,
          `\t\ttype ${type}`,
          '\t\tflags interval',
          `\t\telements = { ${elements.join(', ')} }`,
          '\t}',
          '',
        ]
  const ssh = input.publicSsh
    ? [`\t\ttcp dport ${port} accept comment "publicSsh: SSH from everywhere"`]
    : [
        ...(v4.length > 0
          ? [`\t\tip saddr @operators_v4 tcp dport ${port} accept comment "SSH from the operator CIDRs"`]
          : []),
        ...(v6.length > 0
          ? [`\t\tip6 saddr @operators_v6 tcp dport ${port} accept comment "SSH from the operator CIDRs"`]
          : []),
      ]
  return [
    '#!/usr/sbin/nft -f',
    '# Written by the fleetkit seed at first boot: the minimal inet fleetkit table until the first',
    '# sync, whose firewall role replaces it (docs/seeds-and-inventory.md). Outbound is open.',
    'table inet fleetkit {}',
    'delete table inet fleetkit',
    '',
    'table inet fleetkit {',
    ...set('operators_v4', 'ipv4_addr', v4),
    ...set('operators_v6', 'ipv6_addr', v6),
    '\tchain input {',
    '\t\ttype filter hook input priority filter; policy drop;',
    '',
    '\t\tiif "lo" accept',
    '\t\tct state established,related accept',
    '\t\tct state invalid drop',
    '\t\tmeta l4proto icmp icmp type { destination-unreachable, time-exceeded, parameter-problem } accept',
    '\t\tmeta l4proto icmp icmp type echo-request limit rate 10/second accept',
    '\t\tmeta l4proto ipv6-icmp icmpv6 type { destination-unreachable, packet-too-big, time-exceeded, parameter-problem, nd-router-advert, nd-neighbor-solicit, nd-neighbor-advert, mld-listener-query } accept',
    '\t\tmeta l4proto ipv6-icmp icmpv6 type echo-request limit rate 10/second accept',
    '\t\tip6 saddr fe80::/10 udp sport 547 udp dport 546 accept',
    ...ssh,
    '\t}',
    '',
    '\t# Nothing is forwarded before the roles install Docker.',
    '\tchain forward {',
    '\t\ttype filter hook forward priority filter; policy drop;',
    '\t}',
    '}',
    '',
  ].join('\n')
}

/**
 * The guard as a POSIX sh script for cloud-init's bootcmd (every boot, before sshd starts). It never
 * fails the boot: a kernel without br_netfilter or a read-only /proc/sys (a container) is reported on
 * stderr, and the first sync's roles decide (BR_NETFILTER_MISSING). Once the firewall role's unit
 * is enabled, it loads the confirmed rules at boot and the guard leaves the table alone.
 */
export function firstBootGuardScript(input: FirstBootGuardInput): string {
  const ruleset = firstBootRuleset(input)
  const sysctls = BR_NETFILTER_SYSCTLS.map((k) => `${k}=1`).join('\n')
  return [
    '# fleetkit first-boot guard (src/render/first-boot-guard.ts): br_netfilter and the inet fleetkit table.',
    'say() { echo "fleetkit-seed: $*" >&2; }',
    'umask 022',
    `mkdir -p /etc/fleetkit ${dirOf(BR_NETFILTER_MODULES_FILE)} ${dirOf(BR_NETFILTER_SYSCTL_FILE)}`,
    `[ -e ${BR_NETFILTER_MODULES_FILE} ] || cat > ${BR_NETFILTER_MODULES_FILE} <<'FLEETKIT_MODULES'`,
    BR_NETFILTER_MODULES_CONTENT.trimEnd(),
    'FLEETKIT_MODULES',
    `[ -e ${BR_NETFILTER_SYSCTL_FILE} ] || cat > ${BR_NETFILTER_SYSCTL_FILE} <<'FLEETKIT_SYSCTL'`,
    sysctls,
    'FLEETKIT_SYSCTL',
    '# Built in (or already loaded) shows as /proc/sys/net/bridge; a container cannot load modules.',
    '[ -d /proc/sys/net/bridge ] || modprobe br_netfilter 2>/dev/null || say "br_netfilter not loaded (no module, or a container)"',
    ...BR_NETFILTER_SYSCTLS.map((key) => {
      const path = `/proc/sys/${key.replaceAll('.', '/')}`
      return `[ "$(cat ${path} 2>/dev/null)" = 1 ] || sysctl -q -w ${key}=1 2>/dev/null || say "${key} not set"`
    }),
    'if systemctl is-enabled --quiet fleetkit-firewall.service 2>/dev/null; then',
    '  say "the firewall role owns the inet fleetkit table"',
    'else',
    `  [ -e ${FIREWALL_RULES_PATH} ] || cat > ${FIREWALL_RULES_PATH} <<'FLEETKIT_FIRST_BOOT_RULES'`,
    ruleset.trimEnd(),
    'FLEETKIT_FIRST_BOOT_RULES',
    `  nft -f ${FIREWALL_RULES_PATH} || say "the first-boot nftables table could not be loaded"`,
    'fi',
    'true',
    '',
  ].join('\n')
}

function dirOf(path: string): string {
  return path.slice(0, path.lastIndexOf('/'))
}
