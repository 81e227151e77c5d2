// What one scale-out agents process answers (bench/gateway/scale-agents.ts), merged by bench/scale-out.ts.
export interface ScaleAgentsResult {
  attempts: number
  ok: number
  /** Failed attempts by reason: Node's transport code or `HTTP <status>`. */
  failures: Record<string, number>
  /** [latency ms, count] of the successful heartbeats. */
  latencyBuckets: [number, number][]
  /** Every move to another gateway, `at` in ms since the run's epoch. */
  moves: { nodeId: string; from: string; to: string; at: number }[]
  /** The first 200 after a move, per agent, `at` in ms since the run's epoch. */
  firstOkAfterMove: { nodeId: string; at: number }[]
  /** 200s by gateway (index into the URL list). */
  okByGateway: number[]
}
