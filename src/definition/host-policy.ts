// Reads policy/host-policy.yaml (sizing minimum, host reserve, releases, architectures,
// server types): the file Ansible reads too, so TypeScript and the roles agree.
import { readFileSync } from 'node:fs'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { packagePath } from '../package-root.js'
import { loadYaml } from './load-yaml.js'

export interface ServerTypeSize {
  cores: number
  memoryMiB: number
  diskGiB: number
  architecture: string
}

export interface HostPolicy {
  version: 1
  sizing: { minimum: { cpu: number; memoryMiB: number; rootDiskMiB: number } }
  reserve: { cpu: number; memoryMiB: number; diskGiB: number }
  /** Every release listed is a production release: there is no test-only release any more. */
  releases: Array<{ id: string; version: string; codename: string }>
  architectures: string[]
  /** provider -> server type name -> size */
  serverTypes: Record<string, Record<string, ServerTypeSize>>
  /** provider -> region names; absent means no catalog, so regions are not checked */
  regions?: Record<string, string[]>
}

const HOST_POLICY_PATH = packagePath('policy', 'host-policy.yaml')

const cache = new Map<string, HostPolicy>()

export function loadHostPolicy(path = HOST_POLICY_PATH): HostPolicy {
  const cached = cache.get(path)
  if (cached) return cached
  let parsed: unknown
  try {
    parsed = loadYaml(readFileSync(path, 'utf8'))
  } catch (error) {
    throw new FleetkitError(
      'HOST_POLICY_INVALID',
      `cannot read host policy ${path}: ${(error as { reason?: string }).reason ?? (error as Error).message}`,
      {
        cause: error,
        data: { path },
      },
    )
  }
  const policy = checkHostPolicy(parsed, path)
  cache.set(path, policy)
  return policy
}

function checkHostPolicy(value: unknown, path: string): HostPolicy {
  const p = value as Partial<HostPolicy> | null
  const missing: string[] = []
  const num = (v: unknown, name: string) => {
    if (typeof v !== 'number' || !(v >= 0)) missing.push(name)
  }
  num(p?.sizing?.minimum?.cpu, 'sizing.minimum.cpu')
  num(p?.sizing?.minimum?.memoryMiB, 'sizing.minimum.memoryMiB')
  num(p?.sizing?.minimum?.rootDiskMiB, 'sizing.minimum.rootDiskMiB')
  num(p?.reserve?.cpu, 'reserve.cpu')
  num(p?.reserve?.memoryMiB, 'reserve.memoryMiB')
  num(p?.reserve?.diskGiB, 'reserve.diskGiB')
  if (!Array.isArray(p?.releases)) missing.push('releases')
  // testOnly once kept a release from production hosts; read as nothing now, it would quietly
  // accept what its author meant to refuse, so a policy that still says it is refused.
  else if (p.releases.some((r) => typeof r === 'object' && r !== null && 'testOnly' in r))
    missing.push(
      'releases[].testOnly (no longer read: every listed release is accepted; delete the key, or the release to refuse it)',
    )
  if (!Array.isArray(p?.architectures)) missing.push('architectures')
  if (typeof p?.serverTypes !== 'object' || p.serverTypes === null) missing.push('serverTypes')
  if (p?.version !== 1) missing.push('version: 1')
  if (missing.length > 0) {
    throw new FleetkitError('HOST_POLICY_INVALID', `host policy ${path} lacks or mistypes: ${missing.join(', ')}`, {
      data: { path, keys: missing },
    })
  }
  return p as HostPolicy
}

/** Every region the policy's catalog lists, or undefined when it has no catalog. */
export function knownRegions(policy: HostPolicy): string[] | undefined {
  return policy.regions === undefined ? undefined : Object.values(policy.regions).flat()
}

/** The size of a server type under any provider of the policy, or undefined. */
export function findServerType(policy: HostPolicy, name: string): ServerTypeSize | undefined {
  for (const types of Object.values(policy.serverTypes)) {
    if (Object.hasOwn(types, name)) return types[name]
  }
  return undefined
}
