// oclif's command_not_found hook: a mistyped command fails with COMMAND_UNKNOWN and "did you mean"
// instead of oclif's bare "command not found".
import type { Hook } from '@oclif/core'

const hook: Hook<'command_not_found'> = async function (options) {
  const { reportUnknownCommand } = await import('../unknown-command.js')
  reportUnknownCommand({ id: options.id, argv: options.argv ?? [], config: options.config })
}

export default hook
