// `fleetkit ca rotate`: the two-phase CA rotation (begin, complete, abort, status) of spec 05;
// the work is src/lifecycle/ca/ca-rotation.ts, this file parses flags and prints.
import { Flags } from '@oclif/core'

import { pkiDirFlag, pkiDirOf, stateDirFlag, yesFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import { FleetkitError } from '../../checks/fleetkit-error.js'
import { sleepUnlessAborted } from '../../config/abortable-sleep.js'
import type { CaRotateResult, RotatePhase } from '../../lifecycle/ca/ca-rotation.js'

const PHASES = ['begin', 'complete', 'abort', 'status'] as const

export default class CaRotate extends FleetkitCommand<CaRotateResult> {
  static override summary =
    'Rotate the CA in two phases without an outage: --begin, then --complete once every node renewed (or --abort).'
  static override description = `Run where the gateway's PKI files live, against its database. --begin archives the CA (*.previous),
creates a new one and trusts both; the gateway reloads within 2 s and agents renew onto the new CA at their next
check. A node has moved once the gateway saw its agent authenticate with a new-CA certificate (one issued but
never used, its renewal answer lost, does not count). --complete is refused while an active, unhealthy or
draining node has not moved (CA_ROTATION_INCOMPLETE, naming them); --complete --force cuts them off after
asking (y/N on a terminal, --yes otherwise). Then it revokes every old-CA certificate, re-signs the server
certificate with the new CA and deletes the archived key. Run again, it finishes a completion that was
interrupted. --abort restores the old CA while no node has moved (new-CA certificates never used are revoked).
--status shows how many nodes moved.`
  static override examples = [
    '<%= config.bin %> <%= command.id %> --begin',
    '<%= config.bin %> <%= command.id %> --status --wait',
    '<%= config.bin %> <%= command.id %> --complete --dry-run --json',
    '<%= config.bin %> <%= command.id %> --complete',
    '<%= config.bin %> <%= command.id %> --complete --force --yes',
    '<%= config.bin %> <%= command.id %> --abort',
  ]

  static override flags = {
    begin: Flags.boolean({
      summary: 'Archive the CA, create a new one and trust both.',
      exclusive: ['complete', 'abort', 'status'],
    }),
    complete: Flags.boolean({
      summary: 'Revoke old-CA certificates, re-sign the server certificate, trust the new CA only.',
      exclusive: ['begin', 'abort', 'status'],
    }),
    abort: Flags.boolean({
      summary: 'Restore the archived CA (only while no node has used a new-CA certificate).',
      exclusive: ['begin', 'complete', 'status'],
    }),
    status: Flags.boolean({
      summary: 'Show the rotation and how many nodes renewed onto the new CA.',
      exclusive: ['begin', 'complete', 'abort'],
    }),
    'dry-run': Flags.boolean({
      summary:
        'With --complete: show the nodes that would be cut off, those still on the old CA, and whether abort is possible; change nothing.',
      dependsOn: ['complete'],
    }),
    force: Flags.boolean({
      summary:
        'With --complete: complete although connected nodes have not moved onto the new CA; they are cut off (asks first).',
      dependsOn: ['complete'],
      exclusive: ['dry-run'],
    }),
    yes: yesFlag(
      'With --complete --force: cut the nodes off without asking; needed without a terminal and with --json.',
    ),
    wait: Flags.boolean({
      summary: 'With --status: report progress until every connected node renewed (Ctrl-C stops waiting).',
      dependsOn: ['status'],
    }),
    interval: Flags.integer({ summary: 'With --wait: seconds between looks.', default: 10, min: 1 }),
    'pki-dir': pkiDirFlag(),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<CaRotateResult> {
    const { flags } = await this.parse(CaRotate)
    const phase: RotatePhase | undefined = PHASES.find((p) => flags[p])
    if (!phase)
      throw new FleetkitError('USAGE_INVALID', 'say which phase: --begin, --complete, --abort or --status', {
        actions: ['fleetkit ca rotate --help'],
      })
    const pkiDir = pkiDirOf(flags)
    const { rotateCa } = await import('../../lifecycle/ca/ca-rotation.js')
    const result = await this.withState(
      { stateDir: flags['state-dir'], interruptible: flags.wait },
      ({ pool, clock, signal, progress }) => {
        // The progress of opening the database ends before the work, whose own reports (--wait) follow it.
        progress.done()
        return rotateCa({
          pool,
          phase,
          pkiDir,
          clock,
          dryRun: flags['dry-run'],
          force: flags.force,
          confirm: this.confirmation(flags.yes),
          ...(flags.wait
            ? {
                wait: {
                  intervalMs: flags.interval * 1000,
                  signal,
                  sleep: sleepUnlessAborted,
                  onProgress: (r: CaRotateResult) => this.reportProgress(r),
                },
              }
            : {}),
        })
      },
    )
    this.print(result)
    return result
  }

  private reportProgress(r: CaRotateResult): void {
    if (this.jsonEnabled() || !r.progress) return
    process.stderr.write(
      `${r.progress.renewed}/${r.progress.connected} connected nodes renewed onto the new CA; waiting for ${r.progress.blocking
        .slice(0, 5)
        .map((n) => n.nodeId)
        .join(', ')}${r.progress.blocking.length > 5 ? ', …' : ''}\n`,
    )
  }

  private print(r: CaRotateResult): void {
    const short = (sha: string | null) => (sha ? `${sha.slice(0, 16)}…` : '-')
    const rotation = r.rotation
    if (r.phase === 'begin')
      this.log(
        `${r.resumed ? 'Recorded the interrupted rotation' : 'Rotation begun'}: new CA ${short(rotation.newCaSha256)} replaces ${short(rotation.oldCaSha256)}; the gateway trusts both from its next reload (2 s).`,
      )
    if (r.phase === 'abort')
      this.log(
        `${r.resumed ? 'Finished the interrupted abort' : 'Rotation aborted'}: the CA ${short(rotation.oldCaSha256)} is back; no agent had moved onto ${short(rotation.newCaSha256)}${r.revoked > 0 ? ` (${r.revoked} of its certificates, never used, revoked)` : ''}.`,
      )
    if (r.phase === 'complete' && !r.dryRun)
      this.log(
        `Rotation ${r.resumed ? 'finished' : 'completed'}: ${r.revoked} old-CA certificates revoked; the gateway trusts only ${short(rotation.newCaSha256)}; the archived key is deleted.`,
      )
    if (r.phase === 'status' || r.dryRun)
      this.log(
        `CA ${short(r.currentCaSha256)}; rotation: ${rotation.state}${rotation.begunAt ? ` (begun ${rotation.begunAt})` : ''}`,
      )
    if (r.progress && (r.phase === 'status' || r.dryRun)) {
      const p = r.progress
      this.log(`  renewed onto the new CA: ${p.renewed}/${p.connected} connected nodes`)
      if (p.blocking.length > 0)
        this.log(
          `  still on the old CA (complete waits for them): ${p.blocking
            .map((n) => (n.unusedNewCertificate ? `${n.nodeId} (issued a new-CA certificate it never used)` : n.nodeId))
            .join(', ')}`,
        )
      if (p.cutOff.length > 0)
        this.log(`  would be cut off by completion (${p.cutOff.map((n) => `${n.nodeId} ${n.status}`).join(', ')})`)
      this.log(
        `  complete possible: ${r.completePossible ? 'yes' : 'no'}; abort possible: ${r.abortPossible ? 'yes' : 'no'}`,
      )
    }
    if (r.removedTempFiles.length > 0)
      this.log(`  removed temp files left by an interrupted command: ${r.removedTempFiles.join(', ')}`)
  }
}
