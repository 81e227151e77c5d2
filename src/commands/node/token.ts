// `fleetkit node token`: issue a node a single-use enrollment secret and print it once
// (src/lifecycle/node/node-token.ts); printed only after its hash is stored, refused past provisioning without --reissue.
import { Args, Flags } from '@oclif/core'

import { definitionFlag, stateDirFlag, yesFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import { streamSink } from '../../cli/stdout-sink.js'
import { loadDefinition } from '../../definition/load.js'
import type { NodeTokenResult } from '../../lifecycle/node/node-token.js'
import { systemRng } from '../../config/rng.js'
import { parseSecretTtl } from '../../render/ttl.js'

export default class NodeToken extends FleetkitCommand<NodeTokenResult> {
  static override summary = 'Issue a fresh single-use enrollment secret for a node and print it once.'
  static override description = `For enrolling a node by hand: put the secret in /var/lib/fleetkit/enrollment-secret (0600) and run fleetkit-agent enroll.
Each call replaces the node's previous secret; the state keeps only its SHA-256, and the secret is printed only once that is stored (of two runs at once, one prints a secret, the other only its error). This is the one command that prints a secret, on purpose: under --json it is in result.secret so a script can hand it to the host without a terminal.
A node past provisioning (enrolled, lost, parked, failed), or provisioning with an unused unexpired secret, gets one only with --reissue; its current certificate keeps working until the new enrollment.
A provisioning node with a pending worker seed (its SSH host key pinned, its host not enrolled) gets one only on purpose, as an agent seed does: the holder of the secret is not the host booting from that seed (SEED_KIND_PENDING).
A reissue to an enrolled node and the replacement of a pending worker seed cannot be undone (whoever holds the secret can replace its agent): on a terminal they ask first (y/N); without one, or with --json, they need --yes.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> build-01',
    '<%= config.bin %> <%= command.id %> build-01 --ttl 1h --json',
    '<%= config.bin %> <%= command.id %> build-01 --reissue',
    '<%= config.bin %> <%= command.id %> build-01 --reissue --yes --json',
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
    yes: yesFlag(
      'Reissue to an enrolled node, or replace a pending worker seed, without asking; needed without a terminal and with --json.',
    ),
  }

  /** Set once the --json envelope was printed with the secret, so it is not printed twice. */
  private delivered = false

  async run(): Promise<NodeTokenResult> {
    const { args, flags } = await this.parse(NodeToken)
    const ttlMs = parseSecretTtl(flags.ttl)
    const { issueNodeToken } = await import('../../lifecycle/node/node-token.js')
    const { outputLostAfterCommit } = await import('../../lifecycle/output-sink.js')
    const result = await this.withState({ stateDir: flags['state-dir'] }, ({ pool, actor, clock }) =>
      issueNodeToken({
        pool,
        nodeId: args.node,
        ttlMs,
        reissue: flags.reissue,
        confirm: this.confirmation(flags.yes),
        loadDefinition: () => loadDefinition(flags.definition),
        actor,
        clock,
        rng: systemRng,
      }),
    )
    // Committed: this secret is the node's. Printed now, once; a failed print says how to replace it.
    try {
      await streamSink(process.stdout)(
        this.jsonEnabled() ? `${JSON.stringify(this.toSuccessJson(result), null, 2)}\n` : `${result.secret}\n`,
      )
    } catch (error) {
      throw outputLostAfterCommit('-', error, `the new enrollment secret of ${result.node}`, [
        `fleetkit node token ${result.node} --reissue   (replaces the unseen secret; read its output to the end)`,
      ])
    }
    this.delivered = true
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
