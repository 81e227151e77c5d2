// Rule: tcp port 22 is opened to the world only through publicSsh (the break-glass switch), never
// by listing it in publicPorts while publicSsh is false.
import { pointer } from '../json-pointer.js'
import type { DefinitionError, Exposure } from '../types.js'
import { type DefinitionRule, semanticError } from './rule.js'

interface Level {
  exposure: Exposure | undefined
  path: string[]
}

export const sshPortOnlyThroughPublicSsh: DefinitionRule = ({ definition }) => {
  const errors = new Map<string, DefinitionError>()
  // A node's field replaces its pool's, which replaces the fleet's: judge each effective exposure.
  const check = (owner: string, levels: Level[]) => {
    const innermost = (has: (e: Exposure) => boolean) =>
      [...levels].reverse().find((l) => l.exposure !== undefined && has(l.exposure))
    const portsFrom = innermost((e) => e.publicPorts !== undefined)
    const publicSsh = innermost((e) => e.publicSsh !== undefined)?.exposure?.publicSsh ?? false
    if (!portsFrom || publicSsh) return
    for (const [index, port] of portsFrom.exposure!.publicPorts!.entries()) {
      if (port.protocol !== 'tcp' || port.port !== 22) continue
      const path = pointer(...portsFrom.path, 'exposure', 'publicPorts', index)
      if (errors.has(path)) continue
      errors.set(
        path,
        semanticError({
          code: 'EXPOSURE_SSH_PORT_WITHOUT_PUBLIC_SSH',
          path,
          expected: 'no tcp port 22 in publicPorts while publicSsh is false',
          actual: port,
          message: `${owner} opens tcp port 22 to the world through publicPorts while publicSsh is false; use publicSsh: true for break-glass SSH, or remove the port`,
        }),
      )
    }
  }
  const fleet: Level = { exposure: definition.exposure, path: [] }
  check('the fleet', [fleet])
  for (const [name, pool] of Object.entries(definition.pools))
    check(`pool "${name}"`, [fleet, { exposure: pool.exposure, path: ['pools', name] }])
  // A node without exposure of its own has its pool's, judged above: only the others need a look.
  for (let index = 0; index < definition.nodes.length; index++) {
    const node = definition.nodes[index]!
    if (node.exposure === undefined) continue
    const pool = definition.pools[node.pool]
    check(`node "${node.id}"`, [
      fleet,
      { exposure: pool?.exposure, path: ['pools', node.pool] },
      { exposure: node.exposure, path: ['nodes', String(index)] },
    ])
  }
  return [...errors.values()]
}
