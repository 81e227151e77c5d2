// The host as the agent sees it: file reads and statfs under a root directory ('/' on
// a real host, a fake tree in tests) and the command runner.
import { readFile, statfs } from 'node:fs/promises'
import { join } from 'node:path'

import type { CommandRunner } from './command-runner.js'

export interface Host {
  root: string
  run: CommandRunner
}

function hostPath(host: Host, path: string): string {
  return join(host.root, path)
}

/** Trimmed file content, or undefined when it cannot be read. */
export async function readHostFile(host: Host, path: string): Promise<string | undefined> {
  try {
    return (await readFile(hostPath(host, path), 'utf8')).trim()
  } catch {
    return undefined
  }
}

/** Free bytes for an unprivileged user on the filesystem holding `path`; undefined when unknown. */
export async function freeBytes(host: Host, path: string): Promise<number | undefined> {
  try {
    const stats = await statfs(hostPath(host, path))
    return Number(stats.bavail) * Number(stats.bsize)
  } catch {
    return undefined
  }
}

export interface MountEntry {
  device: string
  mountPoint: string
  fsType: string
}

/** /proc/self/mounts lines; fields escape space, tab, newline and backslash as octal. */
export function parseMounts(text: string): MountEntry[] {
  const unescape = (field: string) =>
    field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)))
  return text
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields.length >= 3)
    .map((fields) => ({ device: unescape(fields[0]!), mountPoint: unescape(fields[1]!), fsType: fields[2]! }))
}

export async function readMounts(host: Host): Promise<MountEntry[]> {
  return parseMounts(
    (await readHostFile(host, '/proc/self/mounts')) ?? (await readHostFile(host, '/proc/mounts')) ?? '',
  )
}

export const BRIDGE_SYSCTLS = [
  '/proc/sys/net/bridge/bridge-nf-call-iptables',
  '/proc/sys/net/bridge/bridge-nf-call-ip6tables',
] as const
