// mocha global fixture of the main suite: runs once in mocha's own process before any test file is
// loaded (in parallel mode, before the workers start). What every worker would otherwise do at the
// same moment is done here once: the agent bundle is built when it is stale (test/support/agent-bundle.ts).
import { agentBundle } from './agent-bundle.js'

export async function mochaGlobalSetup(): Promise<void> {
  await agentBundle()
}
