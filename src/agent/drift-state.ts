// The host's drift digest for the heartbeat: read from the state file fleetkit-drift-check.timer
// (root, every 60 s; the agent role) writes, since the agent cannot read what it digests (nft, sshd -T,
// root-only files). The agent sends the digests, never the items, and says why when it has none.
import { type DriftReport, readDriftReport } from '../protocol/drift-report.js'
import { type Host, readHostFileWithTime } from './host.js'

/** Where the check writes (ansible/playbooks/library/fleetkit_fingerprint.py STATE_PATH). */
export const DRIFT_STATE_PATH = '/run/fleetkit/fingerprint/state.json'
/** Five periods of the timer: an older state means the timer stopped, and its digest proves nothing now. */
export const DRIFT_STATE_STALE_MS = 300_000

/** The report for the next heartbeat; never throws (a host without the check sends `unavailable`). */
export async function readDriftState(host: Host, now: Date): Promise<DriftReport> {
  const file = await readHostFileWithTime(host, DRIFT_STATE_PATH)
  if ('error' in file) return { unavailable: file.error === 'ENOENT' ? 'no_state' : 'unreadable' }
  if (now.getTime() - file.modified.getTime() > DRIFT_STATE_STALE_MS) return { unavailable: 'stale' }
  let parsed: unknown
  try {
    parsed = JSON.parse(file.content)
  } catch {
    return { unavailable: 'unreadable' }
  }
  // The check ran but had no resource list: no sync has recorded a fingerprint on this host since.
  if (typeof parsed === 'object' && parsed !== null && 'error' in parsed) return { unavailable: 'no_list' }
  return readDriftReport(parsed) ?? { unavailable: 'unreadable' }
}
