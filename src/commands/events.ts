// `fleetkit events`: the fleet's event log (src/lifecycle/view/fleet-events.ts), filtered, and
// followed with --follow until Ctrl-C.
import { Flags } from '@oclif/core'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { stateDirFlag } from '../cli/flags.js'
import { FleetkitCommand } from '../cli/fleetkit-command.js'
import { systemClock } from '../config/clock.js'
import type { FleetEvent } from '../lifecycle/view/fleet-events.js'

export interface EventsResult {
  /** The newest events that match, at most --limit, oldest first. */
  events: FleetEvent[]
  /** Whether older events that match were left out by --limit (see them with --since or a larger --limit). */
  olderLeftOut: boolean
}

export default class Events extends FleetkitCommand<EventsResult> {
  static override summary = 'Show the fleet events: every state change, secret issued and enrollment refused.'
  static override description = `Oldest first; past --limit, the newest ones (it says when older ones were left out). --since takes an ISO time or a duration back from now (90s, 15m, 2h, 7d).
--follow keeps printing new events until Ctrl-C, which exits 130 (COMMAND_INTERRUPTED). With --json, --follow
prints one JSON object per line: each event, the ones already logged first, and last the error envelope that ended
it (COMMAND_INTERRUPTED on Ctrl-C, or the failure's code).`
  static override examples = [
    '<%= config.bin %> <%= command.id %> --node build-01',
    '<%= config.bin %> <%= command.id %> --type node_lost --since 24h --json',
    '<%= config.bin %> <%= command.id %> --follow',
  ]
  static override flags = {
    node: Flags.string({ summary: 'Only events about this node.' }),
    since: Flags.string({ summary: 'Only events at or after this time (ISO time, or 90s, 15m, 2h, 7d).' }),
    type: Flags.string({ summary: 'Only events of this kind (node_lost, node_admitted, ...).' }),
    limit: Flags.integer({
      summary: 'At most this many events, the newest (with --follow: of those already logged).',
      default: 1000,
      min: 1,
      max: 100_000,
    }),
    follow: Flags.boolean({ summary: 'Keep printing new events until interrupted.' }),
    'state-dir': stateDirFlag(),
  }

  // A followed log is read line by line: its end (Ctrl-C or a failure) must not be a pretty-printed block.
  protected override jsonLines(): boolean {
    return this.argv.includes('--follow')
  }

  async run(): Promise<EventsResult> {
    const { flags } = await this.parse(Events)
    const { fleetEvents, followEvents, formatEvent, parseSince } = await import('../lifecycle/view/fleet-events.js')
    const since = flags.since === undefined ? undefined : parseSince(flags.since, systemClock.now())
    if (flags.since !== undefined && !since) {
      throw new FleetkitError(
        'USAGE_INVALID',
        `--since ${JSON.stringify(flags.since.slice(0, 40))} is neither an ISO time nor a duration like 15m`,
        { actions: ['fleetkit events --since 1h'] },
      )
    }
    const query = {
      ...(flags.node ? { nodeId: flags.node } : {}),
      ...(flags.type ? { kind: flags.type } : {}),
      ...(since ? { since } : {}),
      limit: flags.limit,
    }
    const follow = flags.follow
    return this.withState({ stateDir: flags['state-dir'], interruptible: follow }, async ({ pool, clock, signal }) => {
      const { events, olderLeftOut } = await fleetEvents(pool, query)
      const print = (e: FleetEvent) =>
        follow && this.jsonEnabled() ? process.stdout.write(`${JSON.stringify(e)}\n`) : this.log(formatEvent(e))
      // On stderr: standard output stays one event a line for whatever reads it.
      if (olderLeftOut && !this.jsonEnabled())
        process.stderr.write(
          `(older events left out: the newest ${flags.limit} are shown; --since or --limit for more)\n`,
        )
      for (const e of events) print(e)
      if (!follow) return { events, olderLeftOut }
      // The list is in time order and the follower's cursor is the id: it starts after the greatest one shown.
      const afterId = events.reduce((max, e) => Math.max(max, e.id), 0)
      await followEvents(pool, { ...query, afterId }, print, { clock, signal, pollMs: 1000 })
      // followEvents ends only when Ctrl-C or SIGTERM aborted it: the command ends as interrupted (130/143).
      throw signal.reason
    })
  }
}
