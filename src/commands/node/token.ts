// `fleetkit node token`: issue a node a single-use enrollment secret and print it once
// (src/lifecycle/node-token.ts); printed before it is stored, refused past provisioning without --reissue.
import { Args, Flags } from '@oclif/core'

import { definitionFlag, envWithStateDir, stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import { systemClock } from '../../config/clock.js'
import { loadDefinition } from '../../definition/load.js'
import type { NodeTokenResult } from '../../lifecycle/node-token.js'
import { systemRng } from '../../config/rng.js'
import { parseSecretTtl } from '../../render/ttl.js'

export default class NodeToken extends FleetkitCommand<NodeTokenResult> {
  static override summary = 'Issue a fresh single-use enrollment secret for a node and print it once.'
  static override description = `For enrolling a node by hand: put the secret in /var/lib/fleetkit/enrollment-secret (0600) and run fleetkit-agent enroll.
Each call replaces the node's previous secret; the state keeps only its SHA-256, stored only after the secret was printed. This is the one command that prints a secret, on purpose: under --json it is in result.secret so a script can hand it to the host without a terminal.
A node past provisioning (enrolled, lost, parked, failed), or provisioning with an unused unexpired secret, gets one only with --reissue; its current certificate keeps working until the new enrollment.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> build-01',
    '<%= config.bin %> <%= command.id %> build-01 --ttl 1h --json',
    '<%= config.bin %> <%= command.id %> build-01 --reissue',
  ]

  static override args = { node: Args.string({ description: 'node id', required: true }) }

  static override flags = {
    ttl: Flags.string({ summary: 'Lifetime of the secret: 1m to 24h.', default: '15m' }),
    definition: definitionFlag('Path of fleet.yaml (read only for a declared node not yet in the state).'),
    'state-dir': stateDirFlag(),
    reissue: Flags.boolean({
      summary:
        'Give a node past provisioning (enrolled, lost, parked, failed), or one whose secret is still pending, a new secret, on purpose; recorded as a secret_reissued event.',
      default: false,
    }),
  }

  /** Set once the --json envelope was printed by deliver(), so it is not printed twice. */
  private delivered = false

  async run(): Promise<NodeTokenResult> {
    const { args, flags } = await this.parse(NodeToken)
    const ttlMs = parseSecretTtl(flags.ttl)
    const { prepareState } = await import('../../lifecycle/state.js')
    await this.withProgress((progress) => prepareState(envWithStateDir(flags['state-dir']), progress))
    const { issueNodeToken } = await import('../../lifecycle/node-token.js')
    const { streamSink } = await import('../../lifecycle/output-sink.js')
    const stdout = streamSink(process.stdout)
    const result = await issueNodeToken({
      nodeId: args.node,
      ttlMs,
      reissue: flags.reissue,
      loadDefinition: () => loadDefinition(flags.definition),
      // The secret is printed before it is stored: a failed print leaves the previous secret valid.
      deliver: async (issued) => {
        await stdout(
          this.jsonEnabled() ? `${JSON.stringify(this.toSuccessJson(issued), null, 2)}\n` : `${issued.secret}\n`,
        )
        this.delivered = true
      },
      env: envWithStateDir(flags['state-dir']),
      clock: systemClock,
      rng: systemRng,
    })
    process.stderr.write(
      `Single-use enrollment secret of ${result.node}, valid until ${result.expiresAt}; it replaced any previous one.\n`,
    )
    return result
  }

  override logJson(json: unknown): void {
    // The success envelope went out with the secret; an error after it is still printed.
    if (this.delivered && (json as { status?: unknown }).status === 0) return
    super.logJson(json)
  }
}
