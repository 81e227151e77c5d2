// The guard for commands that would reach real hosts or a provider: a definition marked
// `example: true` (documentation addresses, placeholder keys) is refused with DEFINITION_IS_EXAMPLE.
import { FleetkitError } from '../checks/fleetkit-error.js'
import type { Definition } from './types.js'

/**
 * Throws DEFINITION_IS_EXAMPLE when `definition` says it is an example. `command` names the caller
 * (`fleetkit sync`) for the message. Call it before anything is contacted or changed.
 */
export function assertNotExample(definition: Pick<Definition, 'example' | 'fleet'>, command: string): void {
  if (definition.example !== true) return
  throw new FleetkitError(
    'DEFINITION_IS_EXAMPLE',
    `${command} refuses fleet "${definition.fleet}": the definition says example: true, and ${command} would reach real hosts or a provider`,
    {
      actions: [
        "run it on your fleet's own definition (without example: true)",
        'fleetkit validate --definition fleet.yaml',
      ],
      data: { fleet: definition.fleet, command },
    },
  )
}
