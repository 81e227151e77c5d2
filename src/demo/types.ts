// What `fleetkit demo` takes and returns (its --json result: schema/output/demo.schema.json), and
// what it has started so far, which its clean-up ends.
import type { HetznerStub } from '../provider/hetzner-stub.js'
import type { Database } from '../store/database.js'
import type { DemoGateway } from './gateway-process.js'
import type { DemoPrinter } from './printing.js'
import type { DemoProcess } from './processes.js'
import type { ReleaseMirror } from './release-mirror.js'
import type { Workspace } from './workspace.js'

export interface DemoResult {
  /** The step titles, in the order they ran. */
  steps: string[]
  /**
   * Demo directories of killed earlier runs that this run removed.
   * @minimum 0
   * @asType integer
   */
  staleRemoved: number
  nodes: { id: string; pool: string; status: string; schedulable: boolean; agentVersion: string | null }[]
  checks: {
    nodeId: string
    /**
     * @minimum 0
     * @asType integer
     */
    passed: number
    /**
     * @minimum 1
     * @asType integer
     */
    total: number
  }[]
  drained: string
  lost: {
    nodeId: string
    /**
     * @minimum 0
     * @asType integer
     */
    releasedAllocations: number
    /**
     * Kept, stranded: its pool (database) is stateful, so a person decides.
     * @minimum 0
     * @asType integer
     */
    strandedAllocations: number
    /**
     * @minimum 0
     * @asType integer
     */
    fencedJobs: number
  }
  caRotation: {
    /** @pattern ^[0-9a-f]{64}$ */
    oldCaSha256: string
    /** @pattern ^[0-9a-f]{64}$ */
    newCaSha256: string
    /**
     * @minimum 0
     * @asType integer
     */
    revoked: number
  }
  /** True when --keep left it running until Ctrl-C. */
  kept: boolean
  /** True once every process the demo started has ended and its directory is removed. */
  cleanedUp: boolean
}

export interface KeepInfo {
  dir: string
  stateDir: string
  pkiDir: string
  operatorUrl: string
  definition: string
}

export interface DemoOptions {
  printer: DemoPrinter
  signal: AbortSignal
  /** --keep: called once the demo is done; resolves when the operator stops it. */
  keep?: (info: KeepInfo) => Promise<void>
}

/** Everything the demo started, filled in as it goes: what the clean-up ends. */
export interface Running {
  workspace?: Workspace
  db?: Database
  stub?: HetznerStub
  mirror?: ReleaseMirror
  gateway?: DemoGateway
  agents: Map<string, DemoProcess>
}
