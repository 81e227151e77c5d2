import { Flags } from '@oclif/core'

import { definitionFlag, envWithStateDir, stateDirFlag } from '../cli/flags.js'
import { FleetkitCommand } from '../cli/fleetkit-command.js'
import { loadDefinition } from '../definition/load.js'
import type { WriteInventoryResult } from '../render/inventory-files.js'

export default class Inventory extends FleetkitCommand<WriteInventoryResult> {
  static override summary = 'Render the Ansible inventory (YAML) and its pinned known_hosts from the definition and the state.'
  static override description = `Groups per pool, region, role and canary; host vars for SSH (known_hosts pinned, StrictHostKeyChecking=yes), features, exposure, data volume, docker network policy and the host policy. Parked and retired nodes are left out.
The known_hosts file is written beside the inventory.`

  static override examples = ['<%= config.bin %> <%= command.id %> --definition fleet.yaml', '<%= config.bin %> <%= command.id %> --output ansible/inventory.yml --json']

  static override flags = {
    definition: definitionFlag(),
    'state-dir': stateDirFlag(),
    output: Flags.string({ summary: 'Inventory file to write; default <state dir>/ansible/inventory.yml.' }),
    'allow-documentation-ranges': Flags.boolean({ summary: 'Accept RFC 5737 documentation ranges in the definition (examples).', default: false }),
  }

  async run(): Promise<WriteInventoryResult> {
    const { flags } = await this.parse(Inventory)
    const definition = await loadDefinition(flags.definition, { allowDocumentationRanges: flags['allow-documentation-ranges'] })
    const { writeInventory } = await import('../render/inventory-files.js')
    const result = await writeInventory({ definition, outputPath: flags.output, env: envWithStateDir(flags['state-dir']) })
    this.log(`Wrote ${result.path} (${result.hosts} hosts, ${result.groups.length} groups) and ${result.knownHostsPath}.`)
    if (result.excluded.length > 0) this.log(`Left out (parked or retired): ${result.excluded.join(', ')}`)
    if (result.unpinned.length > 0) this.log(`No pinned host key, so ssh will refuse: ${result.unpinned.join(', ')}`)
    return result
  }
}
