// oclif's command_not_found hook: `fleetkit valdate` fails with COMMAND_UNKNOWN and "did you mean"
// instead of oclif's bare "command not found".
import type { Hook } from '@oclif/core'

import { reportUnknownCommand } from '../unknown-command.js'

const hook: Hook<'command_not_found'> = async function (options) {
  reportUnknownCommand({ id: options.id, argv: options.argv ?? [], config: options.config })
}

export default hook
