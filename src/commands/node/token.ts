import { Args, Flags } from '@oclif/core'

import { definitionFlag, envWithStateDir, stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import { systemClock } from '../../config/clock.js'
import { loadDefinition } from '../../definition/load.js'
import { systemRng } from '../../render/enrollment-secret.js'
import type { NodeTokenResult } from '../../render/node-token.js'
import { parseSecretTtl } from '../../render/ttl.js'

export default class NodeToken extends FleetkitCommand<NodeTokenResult> {
  static override summary = 'Issue a fresh single-use enrollment secret for a node and print it once.'
  static override description = `For enrolling a node by hand: put the secret in /var/lib/fleetkit/enrollment-secret (0600) and run fleetkit-agent enroll.
Each call replaces the node's previous secret; the state keeps only its SHA-256. This is the one command that prints a secret, on purpose: under --json it is in result.secret so a script can hand it to the host without a terminal.`

  static override examples = ['<%= config.bin %> <%= command.id %> build-01', '<%= config.bin %> <%= command.id %> build-01 --ttl 1h --json']

  static override args = { node: Args.string({ description: 'node id', required: true }) }

  static override flags = {
    ttl: Flags.string({ summary: 'Lifetime of the secret: 1m to 24h.', default: '15m' }),
    definition: definitionFlag('Path of fleet.yaml (read only for a declared node not yet in the state).'),
    'state-dir': stateDirFlag(),
    'allow-documentation-ranges': Flags.boolean({ summary: 'Accept RFC 5737 documentation ranges in the definition (examples).', default: false }),
  }

  async run(): Promise<NodeTokenResult> {
    const { args, flags } = await this.parse(NodeToken)
    const ttlMs = parseSecretTtl(flags.ttl)
    const { issueNodeToken } = await import('../../render/node-token.js')
    const result = await issueNodeToken({
      nodeId: args.node,
      ttlMs,
      loadDefinition: () => loadDefinition(flags.definition, { allowDocumentationRanges: flags['allow-documentation-ranges'] }),
      env: envWithStateDir(flags['state-dir']),
      clock: systemClock,
      rng: systemRng,
    })
    this.log(result.secret)
    process.stderr.write(`Single-use enrollment secret of ${result.node}, valid until ${result.expiresAt}; it replaced any previous one.\n`)
    return result
  }
}
