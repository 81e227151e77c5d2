// mocha root hooks of the host suites: whatever a failed or careless test left running is stopped
// after the run (the process exit handler is the last resort).
import { stopAllHosts } from './registry.js'
import { stopStrangerNamespace } from './network.js'

export const mochaHooks = {
  async afterAll(): Promise<void> {
    await stopAllHosts()
    await stopStrangerNamespace()
  },
}
