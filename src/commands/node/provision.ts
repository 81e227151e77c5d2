// `fleetkit node provision NODE` and `--resume NODE`: create the node's Hetzner Cloud server from
// its agent seed and wait for its enrollment, durably (src/lifecycle/provision/node-provision.ts).
import { dirname } from 'node:path'

import { Args, Flags } from '@oclif/core'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { envWithStateDir } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import { assertNotExample } from '../../definition/example-guard.js'
import { loadDefinition } from '../../definition/load.js'
import type { ProvisionResult } from '../../lifecycle/provision/provision-result.js'
import { provisionCommonFlags } from '../../cli/provision-flags.js'

const list = (text: string | undefined) =>
  text
    ?.split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')

export default class NodeProvision extends FleetkitCommand<ProvisionResult> {
  static override summary =
    "Create a declared node's Hetzner Cloud server from its agent seed and wait for it to enroll."
  static override description = `Only a node declared in fleet.yaml is provisioned (NODE_UNDECLARED prints the entry to add).
Steps, each recorded in the state before the next request: pending (inputs validated with the provider) ->
server_requested (the pool firewall fleetkit-POOL converged and attached, the server created with the
labels fleetkit.node_id, fleetkit.fleet, fleetkit.pool and the agent seed as user_data, gzip+base64) ->
awaiting_enrollment (the server runs; with --volume SIZE, a Hetzner volume of SIZE GB named after the node,
with the same labels, created in the server's location and attached, its device handed to the data_volume
role) -> enrolled. A server or volume already labelled with the node's id is adopted, never created twice;
a server with the node's name but without the label is PROVIDER_NAME_CONFLICT.
--region and --type take candidates in order; resource_unavailable moves to the next pair.
A node that declares ssh.user gets a new SSH host key in its seed, pinned in the state (nothing to copy into
fleet.yaml) and printed with its fingerprint; a key already pinned (fleet.yaml hostKey or the state) is replaced only with --rekey, else
HOST_KEY_PINNED before any provider request. Interrupted or timed out, it continues with --resume.
The server is the node: fleetkit inventory, sync and drift reach it at the server's public IPv4 (else its
IPv6) recorded here, so fleet.yaml needs no ssh.host for it (one that differs is NODE_ADDRESS_DISAGREES).
The token comes from the variable the definition's providers.hetzner.tokenEnv names (HETZNER_API_TOKEN
by default), never from the command line.`
  static override examples = [
    '<%= config.bin %> <%= command.id %> build-2 --region fsn1,nbg1 --type cx32,cpx31',
    '<%= config.bin %> <%= command.id %> build-2 --no-wait --json',
    '<%= config.bin %> <%= command.id %> build-2 --volume 100',
    '<%= config.bin %> <%= command.id %> --resume build-2',
    '<%= config.bin %> <%= command.id %> app-1 --rekey',
  ]
  static override args = { node: Args.string({ description: 'node id, declared in fleet.yaml', required: true }) }
  static override flags = {
    ...provisionCommonFlags,
    resume: Flags.boolean({ summary: 'Continue the provisioning run of NODE from its recorded step.', default: false }),
    region: Flags.string({ summary: 'Candidate locations in order, comma-separated (default: the node or pool).' }),
    type: Flags.string({ summary: 'Candidate server types in order, comma-separated (default: the node or pool).' }),
    image: Flags.string({ summary: "The image (default: the pool's image)." }),
    'placement-group': Flags.string({ summary: 'A spread placement group, by name (created when missing).' }),
    rekey: Flags.boolean({
      summary: 'Replace the SSH host key pinned in fleet.yaml or the state (a host being replaced), on purpose.',
      default: false,
    }),
    'no-wait': Flags.boolean({
      summary: 'Return once the server runs (awaiting_enrollment).',
      default: false,
      // Either a wait or none: `--wait 90s --no-wait` is a mistake, not a choice to settle silently.
      exclusive: ['wait'],
    }),
    volume: Flags.string({
      summary: "A data volume of SIZE GB (10 to 10240) for the node's data_volume role, created and attached.",
      helpValue: 'SIZE',
    }),
  }

  async run(): Promise<ProvisionResult> {
    const { args, flags } = await this.parse(NodeProvision)
    const { provisionNode } = await import('../../lifecycle/provision/node-provision.js')
    const { declaredNode, parseVolumeSize, parseWait } = await import('../../lifecycle/provision/provision-plan.js')
    const { readSeedFiles } = await import('../../lifecycle/seed/seed-files.js')
    const { provisionRuntime } = await import('../../cli/provision-runtime.js')
    const { apiTokenFromEnv, DEFAULT_TOKEN_ENV } = await import('../../provider/api-token.js')
    const waitMs = flags['no-wait'] ? 0 : parseWait(flags.wait)
    const volumeSizeGb = flags.volume === undefined ? undefined : parseVolumeSize(flags.volume)
    if (flags.resume && volumeSizeGb !== undefined)
      throw new FleetkitError('USAGE_INVALID', '--volume is for a new run; --resume continues the recorded one', {
        actions: [`fleetkit node provision --resume ${args.node}`],
      })
    if (flags.resume && flags.rekey)
      throw new FleetkitError('USAGE_INVALID', '--rekey is for a new run; --resume continues the recorded one', {
        actions: [`fleetkit node provision --resume ${args.node}`],
      })
    const definition = await loadDefinition(flags.definition)
    declaredNode(definition, args.node)
    // Documentation addresses and placeholder keys must never reach a provider.
    assertNotExample(definition, 'fleetkit node provision')
    // Before the state opens: a missing token fails at once.
    apiTokenFromEnv(process.env, definition.providers?.hetzner?.tokenEnv ?? DEFAULT_TOKEN_ENV)
    const env = envWithStateDir(flags['state-dir'])
    const files = await readSeedFiles('agent', env, definition, dirname(flags.definition))
    const regions = list(flags.region)
    const types = list(flags.type)
    const result = await this.withState({ stateDir: flags['state-dir'] }, ({ pool, actor, progress }) =>
      provisionNode({
        pool,
        nodeId: args.node,
        definition,
        files,
        ...provisionRuntime(pool, definition, flags['api-url']),
        request: {
          ...(regions ? { regions } : {}),
          ...(types ? { types } : {}),
          ...(flags.image ? { image: flags.image } : {}),
          ...(flags['placement-group'] ? { placementGroup: flags['placement-group'] } : {}),
          ...(volumeSizeGb === undefined ? {} : { volumeSizeGb }),
        },
        resume: flags.resume,
        rekey: flags.rekey,
        actor,
        waitMs,
        progress,
      }),
    )
    this.log(
      `${result.node}: ${result.state}; server ${result.serverId} (${result.serverType} in ${result.region}, ${result.image})${result.sshAddress ? ` at ${result.sshAddress}` : ''}`,
    )
    if (result.sshAddress) {
      const { sameHost } = await import('../../render/node-address.js')
      const declared = definition.nodes.find((n) => n.id === result.node)?.ssh?.host
      this.log(`ssh address ${result.sshAddress}: fleetkit inventory, sync and drift reach ${result.node} there`)
      if (declared !== undefined && !sameHost(declared, result.sshAddress))
        this.log(
          `Warning (NODE_ADDRESS_DISAGREES): fleet.yaml says ssh.host ${declared} for ${result.node}; inventory, sync and drift refuse it until you remove ssh.host or set it to ${result.sshAddress}`,
        )
    }
    if (result.volume)
      this.log(
        `volume ${result.volume.id ?? '(not created)'}${result.volume.adopted ? ' (adopted)' : ''}: ${result.volume.sizeGb} GB, ${result.volume.state}${result.volume.linuxDevice ? ` as ${result.volume.linuxDevice}` : ''}`,
      )
    if (result.hostKey) {
      // The state is where ssh reads the key (by node id): fleet.yaml needs a hostKey line only when
      // it already has another one (after --rekey), which inventory refuses until it is replaced.
      const declared = definition.nodes.find((n) => n.id === result.node)?.hostKey
      const keyOf = (line: string) => line.trim().split(/\s+/).slice(0, 2).join(' ')
      if (declared !== undefined && keyOf(declared) !== keyOf(result.hostKey.publicKey)) {
        this.log(
          `host key pinned in the state: ${result.hostKey.fingerprint}; fleet.yaml's hostKey of ${result.node} is another key, and fleetkit inventory refuses the node (HOST_KEY_DISAGREES) until it says:`,
        )
        this.log(`  hostKey: ${result.hostKey.publicKey}`)
      } else
        this.log(
          `host key pinned in the state: ${result.hostKey.fingerprint}; ssh checks it by node id, so nothing needs copying into fleet.yaml`,
        )
    }
    if (result.state === 'awaiting_enrollment')
      this.log(`continue waiting: fleetkit node provision --resume ${result.node}`)
    return result
  }
}
