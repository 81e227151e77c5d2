// Rule: a node's data volume is mounted where it hides nothing fleetkit or the system needs:
// never /, never over or above fleetkit's or the system's own directories (DATA_VOLUME_MOUNT_RESERVED).
import { pointer } from '../json-pointer.js'
import type { DefinitionError } from '../types.js'
import { type DefinitionRule, semanticError } from './rule.js'

/** fleetkit's own host paths: the volume may not be one, hold one, or sit inside one. */
const FLEETKIT_HOST_PATHS = ['/etc/fleetkit', '/var/lib/fleetkit', '/usr/local/bin'] as const

/**
 * System trees nothing is mounted into: configuration, programs, boot files, and the kernel's
 * and systemd's virtual or volatile filesystems (a mount point there does not survive a boot).
 */
const SYSTEM_TREES = ['/etc', '/usr', '/boot', '/proc', '/sys', '/dev', '/run'] as const

/**
 * System directories a mount may not cover or replace, though a service's own directory inside
 * them is a usual data-volume place (/var/lib/postgresql, /var/lib/docker, /var/log/journal).
 */
const SYSTEM_DIRECTORIES = ['/var/lib', '/var/log'] as const

/** Why `mountPoint` is refused, or undefined when it is a fine place for a data volume. */
export function reservedMountReason(mountPoint: string): string | undefined {
  if (mountPoint === '/') return 'it is the root filesystem'
  const normalised = normaliseAbsolute(mountPoint)
  if (normalised === undefined) return 'it is not an absolute path'
  if (normalised !== mountPoint) return `it is not normalised (write ${normalised})`
  const found: string[] = []
  const check = (paths: readonly string[], owner: string, insideAllowed: boolean) => {
    for (const reserved of paths) {
      const relation = relate(mountPoint, reserved)
      if (relation === 'is') found.unshift(`it is ${owner} ${reserved}`)
      else if (relation && !(insideAllowed && relation === 'sits inside'))
        found.push(`it ${relation} ${owner} ${reserved}`)
    }
  }
  check(FLEETKIT_HOST_PATHS, "fleetkit's own", false)
  check(SYSTEM_TREES, "the system's", false)
  check(SYSTEM_DIRECTORIES, "the system's", true)
  // The path it is, when it is one; else the first thing it holds or sits inside.
  if (found.length > 0) return found[0]
  return undefined
}

export const dataVolumeMountsAllowed: DefinitionRule = ({ definition }) => {
  const errors: DefinitionError[] = []
  // Thousands of nodes share a handful of mount points: judge each once.
  const reasons = new Map<string, string | undefined>()
  definition.nodes.forEach((node, index) => {
    const mountPoint = node.dataVolume?.mountPoint
    if (mountPoint === undefined) return
    if (!reasons.has(mountPoint)) reasons.set(mountPoint, reservedMountReason(mountPoint))
    const reason = reasons.get(mountPoint)
    if (reason === undefined) return
    errors.push(
      semanticError({
        code: 'DATA_VOLUME_MOUNT_RESERVED',
        path: pointer('nodes', String(index), 'dataVolume', 'mountPoint'),
        expected: 'an absolute, normalised directory of its own, for example /srv/data or /var/lib/<service>',
        actual: mountPoint,
        message: `node "${node.id}" mounts its data volume at ${mountPoint}, but ${reason}; mount it at a directory of its own such as /srv/data`,
      }),
    )
  })
  return errors
}

/** The path with empty, "." and ".." segments resolved; undefined when it is not absolute. */
function normaliseAbsolute(path: string): string | undefined {
  if (!path.startsWith('/')) return undefined
  const segments: string[] = []
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue
    if (segment === '..') segments.pop()
    else segments.push(segment)
  }
  return `/${segments.join('/')}`
}

/** How a normalised mount point relates to a reserved directory: it is it, holds it, or sits inside it. */
function relate(mountPoint: string, reserved: string): 'is' | 'contains' | 'sits inside' | undefined {
  if (mountPoint === reserved) return 'is'
  if (reserved.startsWith(`${mountPoint}/`)) return 'contains'
  if (mountPoint.startsWith(`${reserved}/`)) return 'sits inside'
  return undefined
}
