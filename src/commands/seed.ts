// `fleetkit seed`: render a node's first-boot user-data and register it in the state
// (src/lifecycle/seed/seed-node.ts); render and stage first, commit, then put the seed in place.
import { dirname } from 'node:path'

import { Args, Flags } from '@oclif/core'

import { definitionFlag, envWithStateDir, stateDirFlag, yesFlag } from '../cli/flags.js'
import { FleetkitCommand } from '../cli/fleetkit-command.js'
import { streamSink } from '../cli/stdout-sink.js'
import { FleetkitError } from '../checks/fleetkit-error.js'
import { loadDefinition } from '../definition/load.js'
import { systemRng } from '../config/rng.js'
import type { SeedKind, SeedNodeResult } from '../lifecycle/seed/seed-node.js'
import { parseSecretTtl } from '../render/ttl.js'

export default class Seed extends FleetkitCommand<SeedNodeResult> {
  static override summary = 'Render the first-boot user-data (cloud-init seed) of a node and register it in the state.'
  static override description = `agent: a bash script that writes the agent's configuration and a fresh single-use enrollment secret, installs the signed release and enrolls; the node is registered as provisioning.
worker: a #cloud-config document with the node's non-root account, the operators' keys and a pre-generated SSH host key whose public half is pinned in the state.
The seed is written 0600 to --output (default <state dir>/seeds/NODE.user-data, never the current directory); "--output -" writes it to a pipe, never to a terminal. An --output FILE inside a Git work tree that does not ignore it is refused (SECRET_OUTPUT_IN_GIT) before anything is written or stored, unless --force. The seed is written in full under a temporary name first, the node registered, and only then is it renamed into place or printed: a seed you get always holds what the state took, and of two runs at once one writes a seed, the other only its error. Over 32 KiB it is gzipped. --json reports the file, never the secret.
A node past provisioning (enrolled, lost, parked, failed), or provisioning with an unused unexpired secret, gets a new secret only with --reissue; its current certificate keeps working until the new enrollment. A worker whose host key is pinned (fleet.yaml hostKey or the state) gets a new key only with --rekey.
A seed never silently replaces a pending seed of the other kind (an agent seed whose secret is unused, or a worker seed whose host has not enrolled): SEED_KIND_PENDING names it.
A reissue to an enrolled node, a rekey of a pinned key and the replacement of a pending seed of the other kind cannot be undone: on a terminal they ask first (y/N); without one, or with --json, they need --yes.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> build-01 --kind agent --definition fleet.yaml',
    '<%= config.bin %> <%= command.id %> dev-01 --kind worker --autoinstall --output dev-01.yaml --json',
    '<%= config.bin %> <%= command.id %> build-01 --kind agent --ttl 2h --output - | provider-cli create --user-data-from-file -',
    '<%= config.bin %> <%= command.id %> build-01 --kind agent --reissue --output build-01.user-data',
    '<%= config.bin %> <%= command.id %> dev-01 --kind worker --rekey',
    '<%= config.bin %> <%= command.id %> dev-01 --kind worker --rekey --yes --json',
  ]

  static override args = {
    node: Args.string({ description: 'node id (declared in the definition, or provisioned)', required: true }),
  }

  static override flags = {
    kind: Flags.string({
      summary: 'agent (provisioned, enrolls with the gateway) or worker (reached over SSH).',
      options: ['agent', 'worker'],
      required: true,
    }),
    definition: definitionFlag(),
    'state-dir': stateDirFlag(),
    output: Flags.string({
      summary:
        'File to write (0600); "-" for stdout (refused on a terminal). Default <state dir>/seeds/NODE.user-data.',
    }),
    ttl: Flags.string({
      summary: 'Lifetime of the enrollment secret (agent): 1m to 24h, for example 15m or 2h.',
      default: '15m',
    }),
    autoinstall: Flags.boolean({
      summary: 'Wrap a worker seed for an Ubuntu ISO install (autoinstall).',
      default: false,
    }),
    reissue: Flags.boolean({
      summary:
        'Give a node past provisioning (enrolled, lost, parked, failed), or one whose secret is still pending, a new enrollment secret, on purpose; recorded as a secret_reissued event.',
      default: false,
    }),
    rekey: Flags.boolean({
      summary:
        'Give a node whose SSH host key is pinned a new one, on purpose; prints the hostKey line for fleet.yaml when fleet.yaml pins one.',
      default: false,
    }),
    force: Flags.boolean({
      summary:
        'Write --output FILE inside a Git work tree that does not ignore it (refused otherwise: the seed holds a secret).',
      default: false,
    }),
    yes: yesFlag(
      'Reissue, rekey or replace a pending seed of the other kind without asking; needed without a terminal and with --json.',
    ),
  }

  async run(): Promise<SeedNodeResult> {
    const { args, flags } = await this.parse(Seed)
    const ttlMs = parseSecretTtl(flags.ttl)
    const toStdout = flags.output === '-'
    if (toStdout && this.jsonEnabled())
      throw new FleetkitError('USAGE_INVALID', '--output - and --json both want stdout; pass --output FILE with --json')
    if (toStdout && process.stdout.isTTY) {
      throw new FleetkitError(
        'SEED_STDOUT_TTY',
        'the seed holds a secret and stdout is a terminal; it is not printed',
        {
          actions: [
            `fleetkit seed ${args.node} --kind ${flags.kind} --output ${args.node}.user-data`,
            'or redirect stdout to a file or a pipe',
          ],
        },
      )
    }
    const definition = await loadDefinition(flags.definition)
    const { seedNode } = await import('../lifecycle/seed/seed-node.js')
    const { readSeedFiles } = await import('../lifecycle/seed/seed-files.js')
    const env = envWithStateDir(flags['state-dir'])
    const files = await readSeedFiles(flags.kind as SeedKind, env, definition, dirname(flags.definition))
    const result = await this.withState({ stateDir: flags['state-dir'] }, ({ pool, actor, clock }) =>
      seedNode({
        pool,
        nodeId: args.node,
        kind: flags.kind as SeedKind,
        definition,
        ttlMs,
        autoinstall: flags.autoinstall,
        output: flags.output,
        force: flags.force,
        stdout: toStdout ? streamSink(process.stdout) : undefined,
        reissue: flags.reissue,
        rekey: flags.rekey,
        confirm: this.confirmation(flags.yes),
        env,
        actor,
        clock,
        rng: systemRng,
        files,
      }),
    )
    // Only a hostKey fleet.yaml already pins needs the new key copied there (else ssh reads the state's).
    const declaresHostKey = definition.nodes.find((n) => n.id === result.node)?.hostKey !== undefined
    if (toStdout) {
      if (result.rekeyed && declaresHostKey)
        process.stderr.write(`Put this under ${result.node} in fleet.yaml: hostKey: ${result.hostKeyPublic}\n`)
      return result
    }
    const size = `${result.bytes} bytes${result.gzipped ? ` (gzipped from ${result.plainBytes}: over the 32 KiB budget plain)` : ''}`
    if (result.finishedInterrupted) {
      // Nothing new was stored: the seed an interrupted run committed is now in place, as that run would have left it.
      this.log(
        `Put into place the ${result.kind} seed of ${result.node} that an interrupted run had stored and staged: ${result.path} (0600, ${size}). Nothing new was stored.`,
      )
      if (result.secretExpiresAt) this.log(`Its single-use enrollment secret expires at ${result.secretExpiresAt}.`)
      if (result.hostKeyPublic)
        this.log(
          `Pinned host key: ${result.hostKeyPublic}${declaresHostKey ? ` (if the interrupted run was a --rekey, put it under ${result.node} in fleet.yaml as hostKey)` : ''}.`,
        )
      return result
    }
    this.log(`Wrote the ${result.kind} seed of ${result.node} to ${result.path} (0600, ${size}).`)
    if (result.secretExpiresAt && result.reissued)
      this.log(
        `Its reissued single-use enrollment secret expires at ${result.secretExpiresAt}; an enrolled node keeps its status and certificate until it enrolls with it.`,
      )
    else if (result.secretExpiresAt)
      this.log(
        `Its single-use enrollment secret expires at ${result.secretExpiresAt}; the node is registered as provisioning.`,
      )
    if (result.rekeyed && declaresHostKey)
      this.log(
        `New host key, pinned in the state. Put this under ${result.node} in fleet.yaml:\n  hostKey: ${result.hostKeyPublic}`,
      )
    else if (result.rekeyed)
      this.log(
        `New host key, pinned in the state, where ssh reads it by node id (nothing to copy into fleet.yaml): ${result.hostKeyPublic}`,
      )
    else if (result.hostKeyPublic) this.log(`Pinned host key: ${result.hostKeyPublic}`)
    return result
  }
}
