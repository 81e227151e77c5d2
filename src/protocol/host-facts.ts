// Host facts an agent sends with every heartbeat and lease (spec 05), bounded to what the
// gateway stores: a malformed fact becomes null rather than costing the node its heartbeat.
import { CONTROL_CHARACTERS, WireFormatError, ownFields, readObject } from './wire-format.js'

export interface HostFacts {
  cpu_count: number | null
  memory_mb: number | null
  data_disk_free_gb: number | null
  kernel: string | null
  docker_version: string | null
  agent_version: string | null
  bridge_netfilter: boolean | null
  /** The agent's clock minus the gateway's, as the agent measured it. */
  clock_skew_ms: number | null
}

export const HOST_FACT_STRING_MAX = 128
const INT4_MAX = 2_147_483_647

/**
 * Facts reduced to what the columns hold: integers in range (else null), finite numbers,
 * strings without control characters cut to HOST_FACT_STRING_MAX, booleans only if boolean.
 */
export function boundHostFacts(value: object): HostFacts {
  // Each fact read by its own name (ownFields: nothing inherited, one inline cache per fact).
  const facts = ownFields<keyof HostFacts>(value)
  const netfilter = facts.bridge_netfilter
  return {
    cpu_count: boundInt(facts.cpu_count, 0, 1_000_000),
    memory_mb: boundInt(facts.memory_mb, 0, INT4_MAX),
    data_disk_free_gb: boundNumber(facts.data_disk_free_gb, 0, 1e12),
    kernel: boundString(facts.kernel),
    docker_version: boundString(facts.docker_version),
    agent_version: boundString(facts.agent_version),
    bridge_netfilter: typeof netfilter === 'boolean' ? netfilter : null,
    clock_skew_ms: boundInt(facts.clock_skew_ms, -INT4_MAX, INT4_MAX, true),
  }
}

/** `facts` of a heartbeat or lease: absent or null (only last_seen_at moves), else an object of bounded facts. */
export function readHostFacts(value: unknown, path: string): HostFacts | null {
  if (value === undefined || value === null) return null
  if (typeof value !== 'object' || Array.isArray(value))
    throw new WireFormatError(path, 'must be a JSON object or null')
  return boundHostFacts(readObject(value, path))
}

function boundNumber(value: unknown, min: number, max: number): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max ? value : null
}

function boundInt(value: unknown, min: number, max: number, clamp = false): number | null {
  if (typeof value !== 'number' || !Number.isFinite(value)) return null
  const n = Math.round(value)
  if (clamp) return Math.min(max, Math.max(min, n))
  return n >= min && n <= max ? n : null
}

// printableText's set: `node list` and `node show` print these facts on a terminal, where a host must not move
// the cursor or turn its version around.
const CONTROL = new RegExp(`[${CONTROL_CHARACTERS}]`)
const CONTROLS = new RegExp(`[${CONTROL_CHARACTERS}]`, 'g')

// Every heartbeat passes here: the replace and the cut by code points run only when needed.
function boundString(value: unknown): string | null {
  if (typeof value !== 'string') return null
  const clean = (CONTROL.test(value) ? value.replace(CONTROLS, ' ') : value).trim()
  if (clean === '') return null
  // At most HOST_FACT_STRING_MAX UTF-16 units is at most that many code points: nothing to cut.
  return clean.length <= HOST_FACT_STRING_MAX ? clean : Array.from(clean).slice(0, HOST_FACT_STRING_MAX).join('')
}
