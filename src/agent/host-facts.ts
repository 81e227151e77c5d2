// Host facts sent with every heartbeat and lease (cpu, memory, free data disk, kernel,
// Docker, agent version, bridge netfilter, clock skew), read from an injectable root.
import type { HostFacts as WireHostFacts } from '../protocol/host-facts.js'
import { type Host, BRIDGE_SYSCTLS, freeBytes, readHostFile } from './host.js'

/** What this agent always knows: its own version and the bridge netfilter state. */
export type HostFacts = WireHostFacts & { agent_version: string; bridge_netfilter: boolean }

/** Counts CPUs in a kernel list such as "0-3,6,8-9". */
export function countCpuList(list: string): number | null {
  let count = 0
  for (const part of list.trim().split(',')) {
    if (part === '') continue
    const match = /^(\d+)(?:-(\d+))?$/.exec(part)
    if (!match) return null
    count += match[2] === undefined ? 1 : Number(match[2]) - Number(match[1]) + 1
  }
  return count > 0 ? count : null
}

export function memTotalMb(meminfo: string): number | null {
  const match = /^MemTotal:\s+(\d+)\s*kB/m.exec(meminfo)
  return match ? Math.floor(Number(match[1]) / 1024) : null
}

async function readCpuCount(host: Host): Promise<number | null> {
  const online = await readHostFile(host, '/sys/devices/system/cpu/online')
  if (online !== undefined) {
    const count = countCpuList(online)
    if (count !== null) return count
  }
  const cpuinfo = await readHostFile(host, '/proc/cpuinfo')
  const processors = cpuinfo?.match(/^processor\s*:/gm)?.length ?? 0
  return processors > 0 ? processors : null
}

async function readBridgeNetfilter(host: Host): Promise<boolean> {
  for (const path of BRIDGE_SYSCTLS) if ((await readHostFile(host, path)) !== '1') return false
  return true
}

export async function readDockerVersion(host: Host): Promise<string | null> {
  const result = await host.run('docker', ['version', '--format', '{{.Server.Version}}'])
  const version = result.stdout.trim()
  return result.exitCode === 0 && /^[0-9A-Za-z.+~-]{1,64}$/.test(version) ? version : null
}

export interface FactsOptions {
  dataMount: string
  agentVersion: string
  clockSkewMs: number | undefined
  /** Docker's version changes rarely and costs a process: pass a cached value to skip the probe. */
  dockerVersion?: string | null
}

export async function gatherHostFacts(host: Host, options: FactsOptions): Promise<HostFacts> {
  const [cpu, meminfo, free, kernel, docker, bridge] = await Promise.all([
    readCpuCount(host),
    readHostFile(host, '/proc/meminfo'),
    freeBytes(host, options.dataMount === '' ? '/' : options.dataMount),
    readHostFile(host, '/proc/sys/kernel/osrelease'),
    options.dockerVersion === undefined ? readDockerVersion(host) : Promise.resolve(options.dockerVersion),
    readBridgeNetfilter(host),
  ])
  return {
    cpu_count: cpu,
    memory_mb: meminfo === undefined ? null : memTotalMb(meminfo),
    data_disk_free_gb: free === undefined ? null : Math.floor(free / 1024 ** 3),
    kernel: kernel === undefined || kernel === '' ? null : kernel.slice(0, 128),
    docker_version: docker,
    agent_version: options.agentVersion,
    bridge_netfilter: bridge,
    clock_skew_ms: options.clockSkewMs === undefined ? null : Math.round(options.clockSkewMs),
  }
}
