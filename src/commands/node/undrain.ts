// `fleetkit node undrain NODE`: a draining node back in service, active but not schedulable
// until `node admit` (src/lifecycle/node/node-drain.ts).
import { transitionCommand } from '../../cli/transition-command.js'
import type { TransitionResult } from '../../lifecycle/node/node-transition.js'

export default transitionCommand<TransitionResult>({
  summary:
    'Take a draining node back: active again, so it leases jobs and node check runs; node admit makes it schedulable.',
  description: `The way back from node drain. The node becomes active and not schedulable: its agent leases jobs
again (node check runs on it), while no reservation lands until node admit, which applies its own
guards (a heartbeat within 60 s, passing checks, a capacity). Applies to draining nodes, and to lost
nodes that heartbeated since they were lost (a lost node leases no checks job: this is how one whose
latest checks failed is checked again before admit); an active one is left as it is (changed false).
Any other status is NODE_STATE_CONFLICT naming it: a parked node comes back with node unpark, a lost
one not heard from since waits for its agent.`,
  examples: ['<%= config.bin %> <%= command.id %> build-01', '<%= config.bin %> <%= command.id %> build-01 --json'],
  load: async () => (await import('../../lifecycle/node/node-drain.js')).undrainNode,
})
