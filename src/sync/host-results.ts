// Folds the fleetkit_events callback's JSON lines (ansible/callback_plugins) into one result per
// host, and judges each: converged, changed, failed (with its code), unreachable or rolled back.
import { isFailureCode } from '../checks/failure-codes.js'
import { printableText } from '../protocol/wire-format.js'
import type { ManagedResource } from '../store/sync/node-fingerprints.js'
import type { NodeSyncState } from '../store/sync/sync-ledger.js'

export interface AnsibleEvent {
  event: 'task_start' | 'ok' | 'failed' | 'unreachable' | 'skipped' | 'stats'
  host?: string
  task?: string
  role?: string | null
  changed?: boolean
  ignored?: boolean
  msg?: string
  hosts?: Record<string, { ok: number; changed: number; failures: number; unreachable: number; skipped: number }>
  /** What the task manages (a path, unit, package ...): the fingerprint's resources. */
  resources?: ManagedResource[]
  /** The fleetkit_fingerprint module's answer (ansible/playbooks/fingerprint.yml). */
  fingerprint?: HostFingerprint
  /** What a changed task would change (check mode with --diff): the callback's bounded diff, or hidden. */
  diff?: EventDiff
}

/** A setting a role compared itself (sshd -T, a sysctl): its value now and the one the role wants. */
interface SettingDifference {
  setting: string
  current: string | null
  wanted: string | null
}

export interface EventDiff {
  /** A no_log task, or one the role keeps out of diffs (`diff: false`, a file holding a secret): no values. */
  hidden: boolean
  /** Unified diff lines of the files and templates the task writes, at most 200. */
  lines: string[]
  truncated: boolean
  settings?: SettingDifference[]
}

/** What one task would change on one host, as the report carries it. */
export interface TaskDifference {
  role: string
  task: string
  /** The values are not shown: "changed, diff hidden". */
  hidden: boolean
  /** Unified diff lines of the files the task writes: the `--- FILE (now)` and `+++ FILE (wanted)` headers, hunk headers, and lines marked -, + or a space. */
  lines: string[]
  /** More lines differed than the callback carries (200 per task). */
  truncated: boolean
  settings: SettingDifference[]
}

export interface HostFingerprint {
  digest: string
  items: Record<string, string>
}

/**
 * The name of site.yml's post task: the last thing a host runs in the play, after its handlers. Under
 * the free strategy each host ends on its own; sync starts that host's enrollment hand-off when it
 * sees this task's `ok` rather than after the slowest host of the phase.
 */
export const PLAY_END_TASK = 'Mark the end of the play on this host'

/** The host an event says has ended its play, if it says that. */
export function playEndedOn(e: AnsibleEvent): string | null {
  return e.event === 'ok' && e.task === PLAY_END_TASK && typeof e.host === 'string' ? e.host : null
}

export interface HostResult {
  host: string
  tasksOk: number
  tasksChanged: number
  tasksFailed: number
  /** Per role, the tasks that changed (in check mode: would change). */
  changes: Record<string, string[]>
  /** Per changed task, what differs (check mode with --diff), in the order reported. */
  differences: TaskDifference[]
  failure?: { task: string; role: string | null; msg: string }
  unreachable?: string
  /** Every resource a task reported managing, once each, in the order first seen. */
  resources: ManagedResource[]
  fingerprint?: HostFingerprint
}

export interface NodeJudgement {
  state: Extract<NodeSyncState, 'converged' | 'changed' | 'failed' | 'unreachable' | 'rolled_back'>
  code: string | null
  message: string | null
  /**
   * Unreachable after a task had changed it: not a host that was offline before the run, but one the run may
   * have cut off (a firewall or sshd change). A canary lost so is a failed canary, never handed on.
   */
  lostMidRun?: true
}

/** Parses complete lines; a torn last line (a killed writer) is left for the next read. */
export function parseEventLines(text: string): { events: AnsibleEvent[]; rest: string } {
  const lines = text.split('\n')
  const rest = lines.pop() ?? ''
  const events: AnsibleEvent[] = []
  for (const line of lines) {
    if (line.trim() === '') continue
    try {
      events.push(JSON.parse(line) as AnsibleEvent)
    } catch {
      // A line that is not JSON is not ours (a plugin warning): skip it.
    }
  }
  return { events, rest }
}

export function foldHostResults(events: readonly AnsibleEvent[]): Map<string, HostResult> {
  const results = new Map<string, HostResult>()
  // Per host, the resources listed already ("kind:name"): each is listed once.
  const seen = new Map<string, Set<string>>()
  const of = (host: string) => {
    let r = results.get(host)
    if (!r) {
      r = { host, tasksOk: 0, tasksChanged: 0, tasksFailed: 0, changes: {}, differences: [], resources: [] }
      results.set(host, r)
      seen.set(host, new Set())
    }
    return r
  }
  for (const e of events) {
    if (!e.host) continue
    const r = of(e.host)
    if (e.event === 'ok') {
      r.tasksOk += 1
      for (const m of e.resources ?? []) {
        const key = `${m.kind}:${m.name}`
        if (typeof m.kind !== 'string' || typeof m.name !== 'string' || seen.get(e.host)!.has(key)) continue
        seen.get(e.host)!.add(key)
        r.resources.push({ kind: m.kind, name: m.name })
      }
      if (e.fingerprint) r.fingerprint = e.fingerprint
      if (e.changed) {
        r.tasksChanged += 1
        const role = e.role ?? 'playbook'
        ;(r.changes[role] ??= []).push(e.task ?? 'unnamed task')
        const difference = taskDifference(role, e.task ?? 'unnamed task', e.diff)
        if (difference) r.differences.push(difference)
      }
    } else if (e.event === 'failed' && !e.ignored) {
      r.tasksFailed += 1
      r.failure ??= { task: e.task ?? 'unnamed task', role: e.role ?? null, msg: e.msg ?? '' }
    } else if (e.event === 'unreachable') {
      r.unreachable ??= e.msg ?? 'unreachable'
    }
  }
  return results
}

/** Diff lines a task carries at most: the callback's bound, kept for events from elsewhere too. */
export const MAX_DIFF_LINES = 200

/** The report's form of a task's diff event; a hidden one keeps no value, whatever the event held. */
export function taskDifference(role: string, task: string, diff: EventDiff | undefined): TaskDifference | null {
  if (!diff || typeof diff !== 'object') return null
  if (diff.hidden !== false) return { role, task, hidden: true, lines: [], truncated: false, settings: [] }
  const lines = Array.isArray(diff.lines) ? diff.lines.filter((l) => typeof l === 'string') : []
  const settings = (Array.isArray(diff.settings) ? diff.settings : [])
    .filter((d) => typeof d?.setting === 'string')
    .map((d) => ({ setting: d.setting, current: stringOrNull(d.current), wanted: stringOrNull(d.wanted) }))
  if (lines.length === 0 && settings.length === 0) return null
  return {
    role,
    task,
    hidden: false,
    lines: lines.slice(0, MAX_DIFF_LINES),
    truncated: diff.truncated === true || lines.length > MAX_DIFF_LINES,
    settings,
  }
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null
}

// OpenSSH's own words, and mitogen's (its ssh stream reports the same refusal in its own sentence).
const HOST_KEY_CHANGED =
  /REMOTE HOST IDENTIFICATION HAS CHANGED|Host key verification failed|No [A-Z0-9]+ host key is known|mismatching host key/i

// OpenSSH's refusal of every key offered, and Ansible's and mitogen's sentences for it.
const LOGIN_REFUSED = /Permission denied \(|SSH authentication is incorrect|Authentication failed|authentication failed/

/** The code a role's failure message starts with (`FIREWALL_INPUT_INVALID: ...`), if it is registered. */
export function leadingCode(msg: string): string | null {
  const match = /\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b/.exec(msg)
  return match?.[1] && isFailureCode(match[1]) ? match[1] : null
}

/**
 * A host's words (a module's failure message, ssh's error) as the ledger keeps them and the report prints them:
 * one line, printable only (a host that sends an escape sequence, a NUL or an unpaired surrogate gets neither the
 * operator's terminal nor a failed ledger write), bounded.
 */
function oneLine(text: string): string {
  return printableText(text, 500)
}

export function judgeHost(result: HostResult | undefined): NodeJudgement {
  if (!result)
    return { state: 'failed', code: 'SYNC_NODE_FAILED', message: 'ansible-playbook ended without reporting this node' }
  // The dead-man switch restored the previous rules: the host is as it was, not broken; it may have been
  // unreachable while the bad rules were in place, which is what the switch is for.
  if (result.failure?.msg.includes('FIREWALL_CONFIRM_TIMEOUT')) {
    const { task, role, msg } = result.failure
    return {
      state: 'rolled_back',
      code: 'FIREWALL_CONFIRM_TIMEOUT',
      message: `${role ? `${role}: ` : ''}${task}: ${oneLine(msg)}`,
    }
  }
  if (result.unreachable !== undefined) {
    if (HOST_KEY_CHANGED.test(result.unreachable)) {
      return {
        state: 'failed',
        code: 'SSH_HOST_KEY_MISMATCH',
        message: 'the host answered with a key other than the pinned one; not logged in',
      }
    }
    // Reached, but the login was refused: the operator's key, not the network, is what to look at.
    if (LOGIN_REFUSED.test(result.unreachable))
      return {
        state: 'unreachable',
        code: null,
        message: `the host refused the SSH login (use a key of operators.sshKeys: ssh-agent or ANSIBLE_PRIVATE_KEY_FILE): ${oneLine(result.unreachable)}`,
      }
    // A task that changed the host, then no connection: this change may have cut it off. (A task that ran
    // without changing anything proves nothing: set_fact and other local actions never reach the host.)
    if (result.tasksChanged > 0)
      return {
        state: 'unreachable',
        code: null,
        message: `lost its SSH connection after ${result.tasksChanged} task(s) changed it: the change may have cut it off: ${oneLine(result.unreachable)}`,
        lostMidRun: true,
      }
    return { state: 'unreachable', code: null, message: oneLine(result.unreachable) }
  }
  if (result.failure) {
    const { task, role, msg } = result.failure
    const where = `${role ? `${role}: ` : ''}${task}: ${oneLine(msg)}`
    return { state: 'failed', code: leadingCode(msg) ?? 'SYNC_NODE_FAILED', message: where }
  }
  return { state: result.tasksChanged > 0 ? 'changed' : 'converged', code: null, message: null }
}
