// `fleetkit node list`: every node with its status, pool, region, heartbeat age, agent version,
// certificate expiry and capacity reserved of total (src/lifecycle/view/fleet-view.ts).
import { Flags } from '@oclif/core'

import { stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { NodeListResult } from '../../lifecycle/view/fleet-view.js'
import { NODE_STATUSES, type NodeStatus } from '../../store/nodes/nodes.js'

export default class NodeList extends FleetkitCommand<NodeListResult> {
  static override summary =
    'List the fleet: status, pool, region, heartbeat age, agent version, certificate expiry, capacity reserved of total, provisioning.'
  static override description = `Reads the state database. Heartbeat ages are measured on the database's clock. A lost node
gets a second line with its reclamation: when it was lost, how long it was silent, how many jobs
were fenced and allocations released. PROVISION is node provision's step (- for a node it did not
provision; ended:STEP for a node decommissioned before it enrolled), SERVER the Hetzner Cloud server id, VOLUME the volume of --volume (id, size, state).`
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --status lost --pool build --json',
    '<%= config.bin %> <%= command.id %> --schedulable',
  ]
  static override flags = {
    status: Flags.string({
      summary: 'Only nodes in this status (repeatable).',
      options: [...NODE_STATUSES],
      multiple: true,
    }),
    pool: Flags.string({ summary: 'Only nodes of this pool.' }),
    region: Flags.string({ summary: 'Only nodes in this region.' }),
    schedulable: Flags.boolean({
      summary: 'Only schedulable nodes (--no-schedulable: only those that are not).',
      allowNo: true,
    }),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<NodeListResult> {
    const { flags } = await this.parse(NodeList)
    const { nodeList } = await import('../../lifecycle/view/fleet-view.js')
    const { formatNodeTable } = await import('../../lifecycle/view/fleet-table.js')
    const result = await this.withState({ stateDir: flags['state-dir'] }, ({ pool }) =>
      nodeList(pool, {
        ...(flags.status ? { status: flags.status as NodeStatus[] } : {}),
        ...(flags.pool ? { pool: flags.pool } : {}),
        ...(flags.region ? { region: flags.region } : {}),
        ...(flags.schedulable === undefined ? {} : { schedulable: flags.schedulable }),
      }),
    )
    if (result.nodes.length === 0) this.log('No nodes match.')
    else for (const line of formatNodeTable(result)) this.log(line)
    return result
  }
}
