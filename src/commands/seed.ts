import { dirname } from 'node:path'

import { Args, Flags } from '@oclif/core'

import { definitionFlag, envWithStateDir, stateDirFlag } from '../cli/flags.js'
import { FleetkitCommand } from '../cli/fleetkit-command.js'
import { FleetkitError } from '../checks/fleetkit-error.js'
import { systemClock } from '../config/clock.js'
import { loadDefinition } from '../definition/load.js'
import { systemRng } from '../render/enrollment-secret.js'
import type { SeedKind, SeedNodeResult } from '../render/seed-node.js'
import { parseSecretTtl } from '../render/ttl.js'

export default class Seed extends FleetkitCommand<SeedNodeResult> {
  static override summary = 'Render the first-boot user-data (cloud-init seed) of a node and register it in the state.'
  static override description = `agent: a bash script that writes the agent's configuration and a fresh single-use enrollment secret, installs the signed release and enrolls; the node is registered as provisioning.
worker: a #cloud-config document with the node's non-root account, the operators' keys and a pre-generated SSH host key whose public half is pinned in the state.
The seed is written 0600 to --output (default ./NODE.user-data); "--output -" writes it to a pipe, never to a terminal. Over 32 KiB it is gzipped. --json reports the file, never the secret.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> build-01 --kind agent --definition fleet.yaml',
    '<%= config.bin %> <%= command.id %> dev-01 --kind worker --autoinstall --output dev-01.yaml --json',
    '<%= config.bin %> <%= command.id %> build-01 --kind agent --ttl 2h --output - | provider-cli create --user-data-from-file -',
  ]

  static override args = { node: Args.string({ description: 'node id (declared in the definition, or provisioned)', required: true }) }

  static override flags = {
    kind: Flags.string({ summary: 'agent (provisioned, enrolls with the gateway) or worker (reached over SSH).', options: ['agent', 'worker'], required: true }),
    definition: definitionFlag(),
    'state-dir': stateDirFlag(),
    output: Flags.string({ summary: 'File to write (0600); "-" for stdout (refused on a terminal). Default ./NODE.user-data.' }),
    ttl: Flags.string({ summary: 'Lifetime of the enrollment secret (agent): 1m to 24h, for example 15m or 2h.', default: '15m' }),
    autoinstall: Flags.boolean({ summary: 'Wrap a worker seed for an Ubuntu ISO install (autoinstall).', default: false }),
    'allow-documentation-ranges': Flags.boolean({ summary: 'Accept RFC 5737 documentation ranges in the definition (examples).', default: false }),
  }

  async run(): Promise<SeedNodeResult> {
    const { args, flags } = await this.parse(Seed)
    const ttlMs = parseSecretTtl(flags.ttl)
    const toStdout = flags.output === '-'
    if (toStdout && this.jsonEnabled()) throw new FleetkitError('USAGE_INVALID', '--output - and --json both want stdout; pass --output FILE with --json')
    if (toStdout && process.stdout.isTTY) {
      throw new FleetkitError('SEED_STDOUT_TTY', 'the seed holds a secret and stdout is a terminal; it is not printed', {
        actions: [`fleetkit seed ${args.node} --kind ${flags.kind} --output ${args.node}.user-data`, 'or redirect stdout to a file or a pipe'],
      })
    }
    const definition = await loadDefinition(flags.definition, { allowDocumentationRanges: flags['allow-documentation-ranges'] })
    const { seedNode } = await import('../render/seed-node.js')
    const { result, seed } = await seedNode({
      nodeId: args.node,
      kind: flags.kind as SeedKind,
      definition,
      ttlMs,
      autoinstall: flags.autoinstall,
      outputPath: toStdout ? undefined : (flags.output ?? `${args.node}.user-data`),
      env: envWithStateDir(flags['state-dir']),
      clock: systemClock,
      rng: systemRng,
      definitionDir: dirname(flags.definition),
    })
    if (toStdout) {
      process.stdout.write(seed)
      return result
    }
    const size = `${result.bytes} bytes${result.gzipped ? ` (gzipped from ${result.plainBytes}: over the 32 KiB budget plain)` : ''}`
    this.log(`Wrote the ${result.kind} seed of ${result.node} to ${result.path} (0600, ${size}).`)
    if (result.secretExpiresAt) this.log(`Its single-use enrollment secret expires at ${result.secretExpiresAt}; the node is registered as provisioning.`)
    if (result.hostKeyPublic) this.log(`Pinned host key: ${result.hostKeyPublic}`)
    return result
  }
}
