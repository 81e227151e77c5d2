// `fleetkit node show NODE`: one node's facts, certificates, recent jobs, active allocations
// and last events (src/lifecycle/view/fleet-view.ts).
import { Args, Flags } from '@oclif/core'

import { stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import { shownOnTerminal } from '../../protocol/terminal-text.js'
import type { NodeShowResult } from '../../lifecycle/view/fleet-view.js'

export default class NodeShow extends FleetkitCommand<NodeShowResult> {
  static override summary =
    'Show one node: status, provisioning (server, volume), SSH address, host facts, certificates, recent jobs, active allocations and last events.'
  static override description = `The SSH address is the one fleetkit inventory, sync and drift use for a node fleetkit provisioned: its server's public IPv4 as node provision recorded it, else its IPv6. A node fleetkit did not provision is reached at its ssh.host in fleet.yaml, which node show does not read.`
  static override examples = [
    '<%= config.bin %> <%= command.id %> build-01',
    '<%= config.bin %> <%= command.id %> build-01 --events 50 --json',
  ]
  static override args = { node: Args.string({ description: 'node id', required: true }) }
  static override flags = {
    events: Flags.integer({ summary: 'How many of its last events to show.', default: 10, min: 0, max: 1000 }),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<NodeShowResult> {
    const { args, flags } = await this.parse(NodeShow)
    const { nodeShow } = await import('../../lifecycle/view/fleet-view.js')
    const { age, describeAddress, describeDrift, describeProvision, holdText, lostReclamationText } =
      await import('../../lifecycle/view/fleet-table.js')
    const r = await this.withState({ stateDir: flags['state-dir'] }, ({ pool }) =>
      nodeShow(pool, args.node, { events: flags.events }),
    )
    const n = r.node
    this.log(`${n.id}  pool ${n.pool}  region ${n.region ?? '-'}  ${n.status}${n.schedulable ? ', schedulable' : ''}`)
    this.log(`  provision   ${describeProvision(n)}`)
    this.log(`  address     ${describeAddress(n.address)}`)
    this.log(
      `  heartbeat   ${n.heartbeatAgeSeconds === null ? 'never' : `${age(n.heartbeatAgeSeconds)} ago (${n.lastSeenAt})`}`,
    )
    this.log(
      `  agent       ${n.agentVersion ?? '-'}  kernel ${n.facts.kernel ?? '-'}  docker ${n.facts.dockerVersion ?? '-'}  br_netfilter ${n.facts.bridgeNetfilter ?? '-'}`,
    )
    this.log(
      `  capacity    cpu ${n.reserved.cpu}/${n.capacity.cpu ?? '?'}  memory ${n.reserved.memoryMib}/${n.capacity.memoryMib ?? '?'} MiB  disk ${n.reserved.diskGib}/${n.capacity.diskGib ?? '?'} GiB reserved`,
    )
    this.log(`  drift       ${describeDrift(n.drift)}`)
    if (n.lost) this.log(`  lost        ${lostReclamationText(n.id, n.lost)}`)
    if (n.hold) this.log(`  held        ${holdText(n.hold)}`)
    this.log('Certificates:')
    for (const c of r.certificates) this.log(`  ${c.serial}  until ${c.notAfter}${c.revoked ? '  revoked' : ''}`)
    this.log('Jobs:')
    for (const j of r.jobs)
      this.log(`  ${j.id}  ${j.kind}  ${j.status}${j.fenced ? ' (fenced)' : ''}  attempts ${j.attempts}`)
    this.log('Allocations:')
    for (const a of r.allocations)
      this.log(
        `  ${a.id}  ${shownOnTerminal(a.owner)}  cpu ${a.cpu} memory ${a.memoryMib} MiB disk ${a.diskGib} GiB${a.status === 'stranded' ? '  stranded' : ''}`,
      )
    this.log('Events:')
    for (const e of r.events) this.log(`  ${e.at}  ${e.kind}  ${JSON.stringify(e.data)}`)
    return r
  }
}
