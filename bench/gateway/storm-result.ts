// What one storm-agents process answers to `storm` (bench/gateway/storm-agents.ts), and what the
// storm bench adds up over them (bench/gateway-storm.ts).
export interface StormResult {
  agents: number
  back: number
  lastBackMs: number
  p50Ms: number
  p99Ms: number
  resumed: number
  attempts: number
  /** Failed attempts by reason: Node's transport code or `HTTP <status>`. */
  failures: Record<string, number>
  unrecoverable: number
  cpuMicros: number
}
