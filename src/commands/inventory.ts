// `fleetkit inventory`: write the Ansible inventory and its pinned known_hosts from the definition
// and the state (src/lifecycle/seed/inventory-files.ts); "--output -" prints the inventory.
import { dirname } from 'node:path'

import { Flags } from '@oclif/core'

import { definitionFlag, envWithStateDir, stateDirFlag } from '../cli/flags.js'
import { FleetkitCommand } from '../cli/fleetkit-command.js'
import { streamSink } from '../cli/stdout-sink.js'
import { FleetkitError } from '../checks/fleetkit-error.js'
import { loadDefinition } from '../definition/load.js'
import type { WriteInventoryResult } from '../lifecycle/seed/inventory-files.js'

export default class Inventory extends FleetkitCommand<WriteInventoryResult> {
  static override summary =
    'Render the Ansible inventory (YAML) and its pinned known_hosts from the definition and the state.'
  static override description = `Groups per pool, region, role and canary; host vars for SSH (known_hosts pinned, StrictHostKeyChecking=yes), features, exposure, data volume, docker network policy and the host policy. Parked and retired nodes are left out.
The known_hosts file is written beside the inventory; with "--output -" the inventory goes to stdout and known_hosts to <state dir>/ansible/.
A node fleetkit provisioned is reached at its server's address as the state recorded it (IPv4, else IPv6); an ssh.host in fleet.yaml that differs is refused (NODE_ADDRESS_DISAGREES). A node in a pool with a provider that has no server yet and no ssh.host is left out, with the command that provisions it.
A node whose host key in the state differs from its hostKey in fleet.yaml is refused (HOST_KEY_DISAGREES).`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --definition fleet.yaml',
    '<%= config.bin %> <%= command.id %> --output ansible/inventory.yml --json',
    '<%= config.bin %> <%= command.id %> --output - | less',
  ]

  static override flags = {
    definition: definitionFlag(),
    'state-dir': stateDirFlag(),
    output: Flags.string({
      summary: 'Inventory file to write; "-" for stdout; default <state dir>/ansible/inventory.yml.',
    }),
  }

  async run(): Promise<WriteInventoryResult> {
    const { flags } = await this.parse(Inventory)
    const toStdout = flags.output === '-'
    if (toStdout && this.jsonEnabled())
      throw new FleetkitError('USAGE_INVALID', '--output - and --json both want stdout; pass --output FILE with --json')
    const definition = await loadDefinition(flags.definition)
    const { readStateNodes, writeInventory } = await import('../lifecycle/seed/inventory-files.js')
    // The database is opened once, read, and closed before anything is written.
    const stateNodes = await this.withState({ stateDir: flags['state-dir'] }, ({ pool }) => readStateNodes(pool))
    const result = await writeInventory({
      definition,
      outputPath: flags.output,
      stdout: toStdout ? streamSink(process.stdout) : undefined,
      env: envWithStateDir(flags['state-dir']),
      stateNodes,
      definitionDir: dirname(flags.definition),
    })
    // With the inventory on stdout, the notes go to stderr so a pipe gets YAML only.
    const note = (line: string) => (toStdout ? process.stderr.write(`${line}\n`) : this.log(line))
    note(
      `Wrote ${result.path ?? 'the inventory to stdout'} (${result.hosts} hosts, ${result.groups.length} groups) and ${result.knownHostsPath}.`,
    )
    if (result.excluded.length > 0) note(`Left out (parked or retired): ${result.excluded.join(', ')}`)
    for (const { node, reason, action } of result.unprovisioned)
      note(`Left out (no address): ${node}, ${reason}: ${action}`)
    if (result.unpinned.length > 0) note(`No pinned host key, so ssh will refuse: ${result.unpinned.join(', ')}`)
    return result
  }
}
