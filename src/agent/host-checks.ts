// The host check suite a `checks` job runs (and `doctor` shares): each check reports
// `{id, status, code?, detail}` with an ID registered in schema/check-ids.json.
import type { FailureCode } from '../checks/failure-codes.js'
import type { CheckResult } from '../protocol/check-result.js'
import { skewStatus, SKEW_FAIL_MS } from './clock-skew.js'
import { type Host, BRIDGE_SYSCTLS, freeBytes, readHostFile, readHostFileWithTime, readMounts } from './host.js'
import { lineDifference, nftLines } from './nft-lines.js'
import type { CertificateWindow } from './identity.js'
import { lifetimeLeft } from './renewal-schedule.js'

export interface CheckContext {
  host: Host
  dataMount: string
  minFreeGb: number
  unitName: string
  firewallUnit: string
  now: Date
  /** The staged certificate's window, or undefined when no identity is staged. */
  certificate: CertificateWindow | undefined
  clockSkewMs: number | undefined
  /** The node declares it is a container (FLEETKIT_CONTAINER): the kernel checks do not apply. */
  container: boolean
}

/** Every check ID the agent reports; a unit test holds them to schema/check-ids.json. */
export const HOST_CHECK_IDS = [
  'host:br-netfilter',
  'host:data-volume',
  'host:firewall',
  'host:disk-free',
  'agent:unit',
  'agent:certificate',
  'agent:clock-skew',
] as const
export const DOCTOR_ONLY_CHECK_IDS = ['agent:gateway'] as const

const pass = (id: string, detail: string): CheckResult => ({ id, status: 'pass', detail })
const warn = (id: string, detail: string): CheckResult => ({ id, status: 'warn', detail })
// Codes are written as `code: 'CODE'` at each call so the runbook rule sees them used.
const fail = (check: { id: string; code: FailureCode }, detail: string): CheckResult => ({
  id: check.id,
  status: 'fail',
  code: check.code,
  detail,
})

const notApplicable = (id: string, detail: string): CheckResult => ({ id, status: 'not_applicable', detail })

export async function checkBrNetfilter(ctx: CheckContext): Promise<CheckResult> {
  const id = 'host:br-netfilter'
  // A container cannot load a module or set the bridge sysctls: they belong to the kernel it shares.
  if (ctx.container)
    return notApplicable(
      id,
      "the node declares container: true; br_netfilter and the bridge sysctls are the kernel's of the machine running it",
    )
  const values = await Promise.all(BRIDGE_SYSCTLS.map((path) => readHostFile(ctx.host, path)))
  if (values.every((value) => value === undefined))
    return fail({ id, code: 'BR_NETFILTER_OFF' }, '/proc/sys/net/bridge is absent: br_netfilter is not loaded')
  const off = BRIDGE_SYSCTLS.flatMap((path, i) =>
    values[i] === '1' ? [] : [`${path.split('/').pop()}=${values[i] ?? 'missing'}`],
  )
  if (off.length > 0) return fail({ id, code: 'BR_NETFILTER_OFF' }, `bridge sysctls not 1: ${off.join(', ')}`)
  return pass(id, 'br_netfilter active, bridge-nf-call-iptables and -ip6tables are 1')
}

export async function checkDataVolume(ctx: CheckContext): Promise<CheckResult> {
  const id = 'host:data-volume'
  if (ctx.dataMount === '') return warn(id, 'no data volume is configured (FLEETKIT_DATA_MOUNT is empty)')
  const entry = (await readMounts(ctx.host)).filter((mount) => mount.mountPoint === ctx.dataMount).pop()
  if (!entry) return fail({ id, code: 'DATA_VOLUME_NOT_MOUNTED' }, `nothing is mounted at ${ctx.dataMount}`)
  if (entry.fsType !== 'xfs')
    return fail({ id, code: 'DATA_VOLUME_NOT_MOUNTED' }, `${ctx.dataMount} is ${entry.fsType}, not xfs`)
  return pass(id, `${entry.device} is mounted at ${ctx.dataMount} (xfs)`)
}

/** The table the firewall role last converged, as `nft list table inet fleetkit` printed it once confirmed. */
export const FIREWALL_APPLIED_PATH = '/var/lib/fleetkit/firewall/applied.nft'
/** The loaded table as fleetkit-firewall-snapshot.service (root, every 30 s) lists it for an agent that cannot. */
export const FIREWALL_SNAPSHOT_PATH = '/run/fleetkit/firewall/live.nft'
/** Four periods of the snapshot timer: a snapshot older than this means the timer stopped. */
export const FIREWALL_SNAPSHOT_STALE_MS = 120_000
/** How the snapshot records an nft that could not list the table (ansible/roles/firewall/files/). */
const SNAPSHOT_FAILED = '# nft list table inet fleetkit failed:'

export async function checkFirewall(ctx: Pick<CheckContext, 'host' | 'firewallUnit' | 'now'>): Promise<CheckResult> {
  const id = 'host:firewall'
  const result = await ctx.host.run('nft', ['list', 'table', 'inet', 'fleetkit'])
  // The agent runs unprivileged (no CAP_NET_ADMIN): then nft cannot list, and the snapshot answers.
  const denied = result.exitCode === null || /not permitted|permission denied/i.test(result.stderr)
  if (result.exitCode !== 0 && !denied)
    return fail(
      { id, code: 'FIREWALL_TABLE_MISSING' },
      `the inet fleetkit table is not loaded (nft: ${firstLine(result.stderr)})`,
    )
  const applied = await readHostFileWithTime(ctx.host, FIREWALL_APPLIED_PATH)
  if (result.exitCode === 0) {
    if ('error' in applied) return unconverged(id, applied.error, 'the inet fleetkit nftables table is loaded')
    return compareTables(id, applied.content, result.stdout, 'as nft lists it')
  }
  if ('error' in applied) {
    // Nothing to compare with: the unit that loads the table answers for it, as before the first converge.
    const unit = await ctx.host.run('systemctl', ['is-active', ctx.firewallUnit])
    if (unit.exitCode === 0)
      return unconverged(
        id,
        applied.error,
        `nft is not readable by this user; ${ctx.firewallUnit}, which loads the table, is active`,
      )
    return fail(
      { id, code: 'FIREWALL_TABLE_MISSING' },
      `cannot list the table (${result.error ?? firstLine(result.stderr)}) and ${ctx.firewallUnit} is ${unit.stdout.trim() || 'not active'}`,
    )
  }
  const snapshot = await readHostFileWithTime(ctx.host, FIREWALL_SNAPSHOT_PATH)
  if ('error' in snapshot)
    return fail(
      { id, code: 'FIREWALL_SNAPSHOT_STALE' },
      `nft is not readable by this user and ${FIREWALL_SNAPSHOT_PATH} cannot be read (${snapshot.error})${snapshot.error === 'ENOENT' ? ': fleetkit-firewall-snapshot.timer has not run' : ''}`,
    )
  const age = Math.max(0, ctx.now.getTime() - snapshot.modified.getTime())
  if (age > FIREWALL_SNAPSHOT_STALE_MS)
    return fail(
      { id, code: 'FIREWALL_SNAPSHOT_STALE' },
      `the snapshot of the loaded table, ${FIREWALL_SNAPSHOT_PATH}, is ${formatAge(age)} old (written every 30 s, limit ${formatAge(FIREWALL_SNAPSHOT_STALE_MS)}): fleetkit-firewall-snapshot.timer stopped`,
    )
  if (snapshot.content.startsWith(SNAPSHOT_FAILED))
    return fail(
      { id, code: 'FIREWALL_TABLE_MISSING' },
      `the inet fleetkit table is not loaded (snapshot of ${formatAge(age)} ago, nft: ${firstLine(snapshot.content.slice(SNAPSHOT_FAILED.length))})`,
    )
  return compareTables(id, applied.content, snapshot.content, `snapshot of ${formatAge(age)} ago`)
}

/** No converged table to compare with: never converged (ENOENT) passes as before; unreadable warns. */
function unconverged(id: string, error: string, loaded: string): CheckResult {
  if (error === 'ENOENT')
    return pass(id, `${loaded}; not yet converged (no ${FIREWALL_APPLIED_PATH}): not compared with a converged table`)
  return warn(
    id,
    `${loaded}; ${FIREWALL_APPLIED_PATH} cannot be read (${error}): not compared with the converged table`,
  )
}

function compareTables(id: string, converged: string, loaded: string, source: string): CheckResult {
  const wanted = nftLines(converged)
  const difference = lineDifference(wanted, nftLines(loaded))
  if (difference.count === 0)
    return pass(id, `the loaded inet fleetkit table (${source}) is the one last converged (${wanted.length} lines)`)
  return fail(
    { id, code: 'FIREWALL_RULES_DRIFTED' },
    `the loaded inet fleetkit table (${source}) differs from the one last converged in ${difference.count} line${difference.count === 1 ? '' : 's'}; first: ${(difference.first ?? '').slice(0, 200)}`,
  )
}

function formatAge(ms: number): string {
  const seconds = Math.round(ms / 1000)
  if (seconds < 180) return `${seconds} s`
  const minutes = Math.round(seconds / 60)
  return minutes < 180 ? `${minutes} min` : `${Math.round(minutes / 60)} h`
}

export async function checkDiskFree(ctx: CheckContext): Promise<CheckResult> {
  const id = 'host:disk-free'
  const path = ctx.dataMount === '' ? '/' : ctx.dataMount
  const free = await freeBytes(ctx.host, path)
  if (free === undefined) return fail({ id, code: 'DISK_FREE_LOW' }, `cannot read free space of ${path}`)
  const gb = free / 1024 ** 3
  if (gb < ctx.minFreeGb)
    return fail({ id, code: 'DISK_FREE_LOW' }, `${gb.toFixed(1)} GiB free on ${path}, below ${ctx.minFreeGb} GiB`)
  return pass(id, `${gb.toFixed(1)} GiB free on ${path}`)
}

async function checkAgentUnit(ctx: CheckContext): Promise<CheckResult> {
  const id = 'agent:unit'
  const [active, enabled] = await Promise.all([
    ctx.host.run('systemctl', ['is-active', ctx.unitName]),
    ctx.host.run('systemctl', ['is-enabled', ctx.unitName]),
  ])
  if (active.exitCode === null) return warn(id, `cannot run systemctl: ${active.error ?? 'unknown error'}`)
  const state = `${active.stdout.trim() || 'unknown'}, ${enabled.stdout.trim() || 'unknown'}`
  if (active.exitCode === 0 && enabled.exitCode === 0) return pass(id, `${ctx.unitName} is ${state}`)
  return fail({ id, code: 'AGENT_UNIT_INACTIVE' }, `${ctx.unitName} is ${state}`)
}

export function checkCertificate(ctx: Pick<CheckContext, 'now' | 'certificate'>): CheckResult {
  const id = 'agent:certificate'
  const window = ctx.certificate
  if (!window) return fail({ id, code: 'IDENTITY_MISSING' }, 'no certificate is staged: the agent has not enrolled')
  const left = lifetimeLeft(ctx.now, window)
  const until = `expires ${window.notAfter.toISOString()}`
  if (left <= 0)
    return fail({ id, code: 'CERTIFICATE_EXPIRED' }, `the certificate expired ${window.notAfter.toISOString()}`)
  if (ctx.now.getTime() < window.notBefore.getTime())
    return fail(
      { id, code: 'CLOCK_SKEW' },
      `the certificate is not valid before ${window.notBefore.toISOString()}: check the clock`,
    )
  if (left < 1 / 3)
    return {
      id,
      status: 'warn',
      code: 'CERTIFICATE_EXPIRING',
      detail: `${Math.round(left * 100)}% of its lifetime left, past the renewal point; ${until}`,
    }
  return pass(id, `${Math.round(left * 100)}% of its lifetime left; ${until}`)
}

export function checkClockSkew(ctx: Pick<CheckContext, 'clockSkewMs'>): CheckResult {
  const id = 'agent:clock-skew'
  const skew = ctx.clockSkewMs
  const status = skewStatus(skew)
  if (skew === undefined) return warn(id, 'no answer from the gateway yet: skew unknown')
  const detail = `clock differs from the gateway's by ${skew} ms`
  if (status === 'fail') return fail({ id, code: 'CLOCK_SKEW' }, `${detail} (limit ${SKEW_FAIL_MS} ms)`)
  return status === 'warn' ? warn(id, detail) : pass(id, detail)
}

export async function runHostChecks(ctx: CheckContext): Promise<CheckResult[]> {
  return Promise.all([
    checkBrNetfilter(ctx),
    checkDataVolume(ctx),
    checkFirewall(ctx),
    checkDiskFree(ctx),
    checkAgentUnit(ctx),
    Promise.resolve(checkCertificate(ctx)),
    Promise.resolve(checkClockSkew(ctx)),
  ])
}

function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.trim()
      .slice(0, 200) ?? 'no output'
  )
}
