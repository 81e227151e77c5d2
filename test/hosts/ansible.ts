// Ansible against test hosts: an inventory with every host key pinned (known_hosts written beside
// it, StrictHostKeyChecking=yes) and a playbook runner that returns the PLAY RECAP per host.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { stringify } from 'yaml'

import { overlayEnv, runProcess } from '../support/process.js'
import type { ProcessResult } from './exec.js'
import { sshOptions } from './ssh.js'
import type { TestHost } from './types.js'

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
export const ANSIBLE_DIR = join(repoRoot, 'ansible')
const MITOGEN_STRATEGIES = '/usr/lib/python3/dist-packages/ansible_mitogen/plugins/strategy'

export interface Inventory {
  /** inventory.yml: pass with -i. */
  inventoryFile: string
  /** known_hosts holding exactly the hosts' pinned keys. */
  knownHostsFile: string
  dir: string
}

export type HostVars = Record<string, Record<string, unknown>> | ((host: TestHost) => Record<string, unknown>)

/**
 * Writes DIR/inventory.yml and DIR/known_hosts for HOSTS. `hostVars` by host name (or a function of
 * the host); `groups` puts hosts in groups (`{ ingress: ['host-1'] }`), as fleetkit's inventory does for pools.
 */
export async function writeInventory(
  hosts: TestHost[],
  dir: string,
  hostVars: HostVars = {},
  groups: Record<string, string[]> = {},
): Promise<Inventory> {
  await mkdir(dir, { recursive: true })
  const knownHostsFile = join(dir, 'known_hosts')
  await writeFile(knownHostsFile, hosts.map((h) => `${h.knownHostsLine}\n`).join(''))
  const entries: Record<string, Record<string, unknown>> = {}
  for (const host of hosts) {
    const extra = typeof hostVars === 'function' ? hostVars(host) : (hostVars[host.name] ?? {})
    // The same ssh options as `ssh()`: no agent, no user config, the pinned key only.
    const common = sshOptions(host, knownHostsFile).filter((o) => o !== '-F' && o !== 'none')
    entries[host.name] = {
      ansible_host: host.address,
      ansible_port: host.port,
      ansible_user: 'root',
      ansible_ssh_private_key_file: host.operator.privateKeyFile,
      ansible_ssh_common_args: common.filter((o, i) => !(o === '-i' || common[i - 1] === '-i')).join(' '),
      ansible_python_interpreter: '/usr/bin/python3',
      ...extra,
    }
  }
  const children: Record<string, { hosts: Record<string, null> }> = {}
  for (const [group, names] of Object.entries(groups)) {
    children[group] = { hosts: Object.fromEntries(names.map((n) => [n, null])) }
  }
  const inventoryFile = join(dir, 'inventory.yml')
  await writeFile(
    inventoryFile,
    stringify({ all: { hosts: entries, ...(Object.keys(children).length > 0 ? { children } : {}) } }),
  )
  return { inventoryFile, knownHostsFile, dir }
}

export interface PlayRecap {
  ok: number
  changed: number
  unreachable: number
  failed: number
  skipped: number
  rescued: number
  ignored: number
}

export interface PlaybookResult extends ProcessResult {
  /** The PLAY RECAP line of each host (absent for a host Ansible never reached a recap for). */
  recap: Record<string, PlayRecap>
}

export interface PlaybookOptions {
  inventory: Inventory
  /** A path, or a name under ansible/playbooks/ (`site.yml`). */
  playbook: string
  check?: boolean
  diff?: boolean
  tags?: string[]
  skipTags?: string[]
  limit?: string
  extraVars?: Record<string, unknown>
  /** Debian's ansible-mitogen (strategy mitogen_linear): about 6x faster per task in a VM. */
  mitogen?: boolean
  env?: NodeJS.ProcessEnv
  timeoutMs?: number
}

export function parseRecap(stdout: string): Record<string, PlayRecap> {
  const recap: Record<string, PlayRecap> = {}
  const start = stdout.lastIndexOf('PLAY RECAP')
  if (start < 0) return recap
  for (const line of stdout.slice(start).split('\n').slice(1)) {
    const match = /^(\S+)\s+:\s+(.*)$/.exec(line.trim())
    if (!match?.[1] || !match[2]) continue
    const counts: Record<string, number> = Object.fromEntries(
      [...match[2].matchAll(/(\w+)=(\d+)/g)].map((m) => [m[1], Number(m[2])]),
    )
    recap[match[1]] = {
      ok: counts.ok ?? 0,
      changed: counts.changed ?? 0,
      unreachable: counts.unreachable ?? 0,
      failed: counts.failed ?? 0,
      skipped: counts.skipped ?? 0,
      rescued: counts.rescued ?? 0,
      ignored: counts.ignored ?? 0,
    }
  }
  return recap
}

/** Runs ansible-playbook with fleetkit's ansible.cfg against the inventory; never throws on a failed play. */
export async function runPlaybook(options: PlaybookOptions): Promise<PlaybookResult> {
  const playbook = options.playbook.includes('/') ? options.playbook : join(ANSIBLE_DIR, 'playbooks', options.playbook)
  const args = ['-i', options.inventory.inventoryFile, playbook]
  if (options.check) args.push('--check')
  if (options.diff) args.push('--diff')
  if (options.tags?.length) args.push('--tags', options.tags.join(','))
  if (options.skipTags?.length) args.push('--skip-tags', options.skipTags.join(','))
  if (options.limit) args.push('--limit', options.limit)
  if (options.extraVars) args.push('--extra-vars', JSON.stringify(options.extraVars))
  const env = overlayEnv({
    ANSIBLE_CONFIG: join(ANSIBLE_DIR, 'ansible.cfg'),
    ANSIBLE_NOCOLOR: '1',
    ANSIBLE_FORCE_COLOR: '0',
    ANSIBLE_LOCAL_TEMP: join(options.inventory.dir, '.ansible-tmp'),
    ANSIBLE_SSH_CONTROL_PATH_DIR: join(options.inventory.dir, '.cp'),
    ANSIBLE_RETRY_FILES_ENABLED: '0',
    ...(options.mitogen ? { ANSIBLE_STRATEGY_PLUGINS: MITOGEN_STRATEGIES, ANSIBLE_STRATEGY: 'mitogen_linear' } : {}),
    ...options.env,
  })
  const result = await runProcess('ansible-playbook', args, {
    env,
    cwd: ANSIBLE_DIR,
    timeoutMs: options.timeoutMs ?? 15 * 60_000,
  })
  return { ...result, recap: parseRecap(result.stdout) }
}
