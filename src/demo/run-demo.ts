// `fleetkit demo`: the whole of fleetkit on this machine in about a minute (the steps are steps.ts),
// then everything it started stopped and removed, on every way out: the end, an error, Ctrl-C.
import { stopEmbeddedServer } from '../store/embedded/server.js'
import { demoSteps } from './steps.js'
import type { DemoOptions, DemoResult, Running } from './types.js'
import { removeWorkspace } from './workspace.js'

export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const running: Running = { agents: new Map() }
  let result: DemoResult | undefined
  try {
    result = await demoSteps(options, running)
  } catch (error) {
    // Interrupted: whichever step noticed first, the demo as a whole was stopped (COMMAND_INTERRUPTED).
    throw options.signal.aborted ? options.signal.reason : error
  } finally {
    await cleanUp(running)
  }
  return { ...result, cleanedUp: true }
}

/** Ends everything the demo started, in reverse order, and removes its directory; never throws. */
async function cleanUp(running: Running): Promise<void> {
  const quietly = (work: () => Promise<unknown>) => work().catch(() => undefined)
  await Promise.all([...running.agents.values()].map((agent) => quietly(() => agent.stop(2000))))
  if (running.gateway) await quietly(() => running.gateway!.process.stop(5000))
  if (running.mirror) await quietly(() => running.mirror!.close())
  if (running.stub) await quietly(() => running.stub!.close())
  if (running.db) await quietly(() => running.db!.close())
  if (running.workspace) {
    await quietly(() => stopEmbeddedServer(running.workspace!.stateDir, { timeoutMs: 20_000 }))
    await quietly(() => removeWorkspace(running.workspace!))
  }
}
