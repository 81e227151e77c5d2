// `fleetkit db status`: which PostgreSQL holds the state, its schema version and node counts
// (src/store/admin.ts); never changes the schema.
import { STATE_DIR_DEFAULT, stateDirFlag, stateDirOption } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { DatabaseStatus } from '../../store/admin.js'

export default class DbStatus extends FleetkitCommand<DatabaseStatus> {
  static override summary =
    'Show which PostgreSQL holds fleetkit state, its schema version and migrations, and node counts.'
  static override description = `Uses DATABASE_URL when set (its password is shown as ***), else the embedded server in
the state directory. Does not start the embedded server and does not migrate: a stopped embedded
server is reported as stopped, with no schema.`
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    'DATABASE_URL=postgres://fleet@db.example.net/fleet <%= config.bin %> <%= command.id %> --json',
  ]

  static override flags = {
    'state-dir': stateDirFlag(`The state directory of the embedded server (default: ${STATE_DIR_DEFAULT}).`),
  }

  async run(): Promise<DatabaseStatus> {
    const { flags } = await this.parse(DbStatus)
    const { describeDatabase } = await import('../../store/admin.js')
    const status = await describeDatabase(stateDirOption(flags['state-dir']))
    const { server, schema, nodes } = status
    if (server.source === 'embedded' && server.embedded) {
      const e = server.embedded
      this.log(`Server:  embedded PostgreSQL in ${e.dataDir}`)
      this.log(
        e.running
          ? `         running, PID ${e.pid}, ${server.url}`
          : `         ${e.initialised ? 'stopped' : 'not created yet'} (any command that needs state starts it)`,
      )
    } else {
      this.log(`Server:  DATABASE_URL ${server.url}`)
    }
    if (schema) {
      this.log(
        `Schema:  version ${schema.version ?? 'none'} (this fleetkit knows up to ${schema.latestKnown})${schema.compatible ? '' : ': NEWER than this fleetkit, refused'}`,
      )
      for (const m of schema.applied) this.log(`  applied  ${pad(m.version)}-${m.name}  ${m.appliedAt}`)
      for (const m of schema.pending) this.log(`  pending  ${pad(m.version)}-${m.name}`)
      for (const m of schema.unknown) this.log(`  unknown  ${pad(m.version)}-${m.name} (from a newer fleetkit)`)
      for (const m of schema.changed)
        this.log(`  changed  ${pad(m.version)}-${m.name} (file differs from what was applied)`)
      if (schema.pending.length > 0) this.log('Run: fleetkit db migrate')
    }
    if (nodes) {
      const parts = Object.entries(nodes.byStatus)
        .filter(([, n]) => n > 0)
        .map(([s, n]) => `${s} ${n}`)
      this.log(`Nodes:   ${nodes.total}${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`)
    }
    if (status.archive) this.logArchive(status.archive)
    return status
  }

  private logArchive(a: NonNullable<DatabaseStatus['archive']>): void {
    if (!a.enabled && a.dir === null) {
      this.log('Archive: off (fleetkit db archive enable DIR)')
      return
    }
    this.log(
      `Archive: ${a.enabled ? 'on' : 'OFF'}${a.dir ? ` into ${a.dir}` : ''}, a switch at least every ${a.archiveTimeoutSeconds} s`,
    )
    this.log(
      a.lastArchivedWal
        ? `         last archived ${a.lastArchivedWal}, ${a.lastArchivedAgeSeconds ?? 0} s ago (${a.lastArchivedAt})`
        : '         nothing archived yet',
    )
    if (a.lastFailedWal && (a.lastArchivedAt === null || (a.lastFailedAt ?? '') > a.lastArchivedAt))
      this.log(
        `         FAILING: ${a.lastFailedWal} at ${a.lastFailedAt} (${a.failedCount} failures; read the server log)`,
      )
    if (a.readySegments !== null && a.readySegments > 0) this.log(`         ${a.readySegments} segment(s) waiting`)
    const last = a.baseBackups.at(-1)
    this.log(
      last
        ? `         ${a.baseBackups.length} base backup(s), the last ${last.label} (restorable from ${last.stoppedAt})`
        : '         no base backup: fleetkit db archive base-backup',
    )
    const s = a.shipping
    if (s) {
      this.log(
        `Shipped: to ${s.url}, newest there ${s.lastShippedWal ?? 'none'}, ${s.unshippedSegments} segment(s) not yet${s.lastSuccessAgeSeconds === null ? '' : `, last ship ${s.lastSuccessAgeSeconds} s ago`}`,
      )
      if (s.lastError)
        this.log(`         FAILING: ${s.lastError.code}: ${s.lastError.message} (fleetkit db archive ship)`)
    }
  }
}

function pad(version: number): string {
  return String(version).padStart(4, '0')
}
