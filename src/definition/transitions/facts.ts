// What the transition rules need to know from the state: allocations and leases a node still
// holds, and which revisions a canary run has proven. Injected, so the rules need no database.

export interface TransitionFacts {
  activeAllocations(nodeId: string): Promise<number>
  liveLeases(nodeId: string): Promise<number>
  canaryProven(kind: 'image' | 'agentVersion', value: string): Promise<boolean>
}

/** Where the facts came from, reported by `fleetkit validate --since`. */
export type TransitionFactsSource = 'none' | 'store'

/** No state recorded: no allocations, no leases, nothing proven by a canary. */
export const NO_STATE_FACTS: TransitionFacts = {
  activeAllocations: async () => 0,
  liveLeases: async () => 0,
  canaryProven: async () => false,
}
