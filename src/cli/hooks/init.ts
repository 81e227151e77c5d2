// oclif's init hook: a topic followed by a word that names none of its commands (`db stat`) is an
// unknown command too; without this, oclif would print the topic's help and exit 0.
import type { Hook } from '@oclif/core'

const hook: Hook<'init'> = async function (options) {
  const { id, argv, config } = options
  if (id === undefined || config.findCommand(id) || !config.findTopic(id)) return
  const next = argv[0]
  if (next === undefined || next.startsWith('-')) return
  // Loaded only here: this hook runs before every command and must cost nothing when all is well.
  const { reportUnknownCommand } = await import('../unknown-command.js')
  this.exit(reportUnknownCommand({ id: `${id}:${next}`, argv: argv.slice(1), config }))
}

export default hook
