// Rule: no node or server type is smaller than policy/host-policy.yaml sizing.minimum
// (cpu, memory, root disk); a smaller host cannot run the agent, Docker and a job.
// The minimum is a machine's size, and maxCapacity what a node offers jobs after the host reserve,
// so a maxCapacity is judged by the machine it needs: itself plus the reserve.
import { withHostReserve } from '../capacity.js'
import { findServerType, type HostPolicy } from '../host-policy.js'
import { pointer } from '../json-pointer.js'
import type { DefinitionError } from '../types.js'
import { type DefinitionRule, semanticError } from './rule.js'

interface Size {
  cpu: number
  memoryMiB: number
  diskMiB: number
}

function shortfalls(size: Size, policy: HostPolicy): string[] {
  const min = policy.sizing.minimum
  const short: string[] = []
  if (size.cpu < min.cpu) short.push(`cpu ${size.cpu} < ${min.cpu}`)
  if (size.memoryMiB < min.memoryMiB) short.push(`memoryMiB ${size.memoryMiB} < ${min.memoryMiB}`)
  if (size.diskMiB < min.rootDiskMiB) short.push(`disk ${size.diskMiB} MiB < ${min.rootDiskMiB} MiB`)
  return short
}

export const sizesAtLeastMinimum: DefinitionRule = ({ definition, policy }) => {
  const errors: DefinitionError[] = []
  const expected = policy.sizing.minimum
  // The path is built only for an error: a fleet has thousands of nodes.
  const checkType = (path: () => string, owner: string, typeName: string | undefined) => {
    const size = typeName === undefined ? undefined : findServerType(policy, typeName)
    if (!size) return
    const short = shortfalls({ cpu: size.cores, memoryMiB: size.memoryMiB, diskMiB: size.diskGiB * 1024 }, policy)
    if (short.length === 0) return
    errors.push(
      semanticError({
        code: 'NODE_SIZE_BELOW_MINIMUM',
        path: path(),
        expected,
        actual: size,
        message: `${owner} server type "${typeName}" is below the host policy minimum: ${short.join(', ')}`,
      }),
    )
  }
  for (const [name, pool] of Object.entries(definition.pools))
    checkType(() => pointer('pools', name, 'serverType'), `pool "${name}"`, pool.serverType)
  for (let index = 0; index < definition.nodes.length; index++) {
    const node = definition.nodes[index]!
    if (node.serverType !== undefined)
      checkType(() => pointer('nodes', index, 'serverType'), `node "${node.id}"`, node.serverType)
    const cap = node.maxCapacity
    if (!cap) continue
    const machine = withHostReserve(cap, policy)
    const short = shortfalls(
      { cpu: machine.cpu, memoryMiB: machine.memoryMiB, diskMiB: machine.diskGiB * 1024 },
      policy,
    )
    if (short.length === 0) continue
    const reserve = policy.reserve
    errors.push(
      semanticError({
        code: 'NODE_SIZE_BELOW_MINIMUM',
        path: pointer('nodes', index, 'maxCapacity'),
        expected,
        actual: cap,
        message: `node "${node.id}" maxCapacity plus the host reserve (cpu ${reserve.cpu}, memoryMiB ${reserve.memoryMiB}, diskGiB ${reserve.diskGiB}) is below the host policy minimum: ${short.join(', ')}`,
      }),
    )
  }
  return errors
}
