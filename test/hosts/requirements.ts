// What the test hosts need from this machine, checked up front so a suite fails with one message
// naming what is missing (and the command that installs it) instead of an obscure error mid-test.
import { accessSync, constants, existsSync } from 'node:fs'
import { delimiter, join } from 'node:path'

export type HostKind = 'container' | 'vm'

/** Each tool, the Debian package that provides it, and which kinds of host need it. */
const TOOLS: Array<{ command: string; pkg: string; kinds: HostKind[] }> = [
  { command: 'debootstrap', pkg: 'debootstrap', kinds: ['container', 'vm'] },
  { command: 'flock', pkg: 'util-linux', kinds: ['container', 'vm'] },
  { command: 'unshare', pkg: 'util-linux', kinds: ['container'] },
  { command: 'losetup', pkg: 'mount', kinds: ['container'] },
  { command: 'systemd-nspawn', pkg: 'systemd-container', kinds: ['container'] },
  { command: 'ip', pkg: 'iproute2', kinds: ['container'] },
  { command: 'ssh', pkg: 'openssh-client', kinds: ['container', 'vm'] },
  { command: 'ssh-keygen', pkg: 'openssh-client', kinds: ['container', 'vm'] },
  { command: 'ansible-playbook', pkg: 'ansible-core', kinds: ['container', 'vm'] },
  { command: 'qemu-system-x86_64', pkg: 'qemu-system-x86', kinds: ['vm'] },
  { command: 'qemu-img', pkg: 'qemu-utils', kinds: ['vm'] },
  { command: 'mkfs.ext4', pkg: 'e2fsprogs', kinds: ['vm'] },
  { command: 'mkfs.vfat', pkg: 'dosfstools', kinds: ['vm'] },
  { command: 'mcopy', pkg: 'mtools', kinds: ['vm'] },
  { command: 'socat', pkg: 'socat', kinds: ['vm'] },
]

function onPath(command: string, path = process.env.PATH ?? ''): boolean {
  return [...path.split(delimiter), '/usr/sbin', '/sbin'].some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

/** What is missing for KIND on this machine: one line per problem (empty when all is there). */
export function missingForHosts(
  kinds: HostKind[] = ['container', 'vm'],
  env: { uid: number; path?: string } = { uid: process.getuid?.() ?? -1, path: process.env.PATH },
): string[] {
  const problems: string[] = []
  if (env.uid !== 0)
    problems.push(
      'the test hosts need root (network namespaces, overlay mounts, loop devices): run the host suites as root',
    )
  const packages = new Set<string>()
  for (const tool of TOOLS) {
    if (tool.kinds.some((k) => kinds.includes(k)) && !onPath(tool.command, env.path)) packages.add(tool.pkg)
  }
  if (kinds.includes('vm') && !existsSync('/usr/lib/python3/dist-packages/ansible_mitogen'))
    packages.add('ansible-mitogen')
  if (packages.size > 0)
    problems.push(
      `missing packages: ${[...packages].join(' ')} (install them with: sudo bash scripts/install-test-deps)`,
    )
  return problems
}

/**
 * Throws one error that names everything missing for KIND (root, packages) and how to install it.
 * The host suites call it first: unavailable hosts FAIL the suite, they never skip it.
 */
export async function assertHostsAvailable(...kinds: HostKind[]): Promise<void> {
  const problems = missingForHosts(kinds.length > 0 ? kinds : ['container', 'vm'])
  if (problems.length > 0) throw new Error(`test hosts unavailable: ${problems.join('; ')}`)
}
