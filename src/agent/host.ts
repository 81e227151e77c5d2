// The host as the agent sees it: file reads and statfs under a root directory ('/' on
// a real host, a fake tree in tests) and the command runner.
import { open, readFile, statfs } from 'node:fs/promises'
import { join } from 'node:path'

import type { CommandRunner } from './command-runner.js'

export interface Host {
  root: string
  run: CommandRunner
  /** Reads a file some other way than under root: the host suites read a test host's over ssh. */
  readFile?: (path: string) => Promise<HostFile>
}

/** A file's whole content and when it was last written, or why it could not be read (ENOENT, EACCES). */
export type HostFile = { content: string; modified: Date } | { error: string }

function hostPath(host: Host, path: string): string {
  return join(host.root, path)
}

/** Trimmed file content, or undefined when it cannot be read. */
export async function readHostFile(host: Host, path: string): Promise<string | undefined> {
  if (host.readFile) {
    const file = await host.readFile(path)
    return 'error' in file ? undefined : file.content.trim()
  }
  try {
    return (await readFile(hostPath(host, path), 'utf8')).trim()
  } catch {
    return undefined
  }
}

/** A file's content and modification time (the age of a snapshot another unit writes). */
export async function readHostFileWithTime(host: Host, path: string): Promise<HostFile> {
  if (host.readFile) return host.readFile(path)
  try {
    // One open file: the time and the content are those of the same file, even if it is replaced meanwhile.
    const handle = await open(hostPath(host, path))
    try {
      const { mtime } = await handle.stat()
      return { content: await handle.readFile('utf8'), modified: mtime }
    } finally {
      await handle.close()
    }
  } catch (error) {
    return { error: (error as NodeJS.ErrnoException).code ?? String(error) }
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
