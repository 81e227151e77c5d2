// `fleetkit node park NODE` (src/lifecycle/node/node-park.ts).
import { transitionCommand } from '../../cli/transition-command.js'
import type { TransitionResult } from '../../lifecycle/node/node-transition.js'

export default transitionCommand<TransitionResult>({
  summary: 'Park a node: out of sync, scheduling and lost detection, keeping its identity (certificates).',
  examples: ['<%= config.bin %> <%= command.id %> build-01', '<%= config.bin %> <%= command.id %> build-01 --json'],
  load: async () => (await import('../../lifecycle/node/node-park.js')).parkNode,
})
