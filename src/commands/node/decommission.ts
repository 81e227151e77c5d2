// `fleetkit node decommission NODE [--wait S]`: retire a node, revoking every certificate, once
// it holds no allocations or live leases (src/lifecycle/node/node-decommission.ts).
import { existsSync } from 'node:fs'

import { Args, Flags } from '@oclif/core'

import { definitionFlag, stateDirFlag, yesFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { DecommissionResult } from '../../lifecycle/node/node-decommission.js'

export default class NodeDecommission extends FleetkitCommand<DecommissionResult> {
  static override summary =
    'Retire a node: revoke every certificate and set it retired, once it holds no allocations or live leases.'
  static override description = `Applies to draining, provisioning, failed, lost and retired nodes (drain an active one first).
Refused with NODE_HAS_ALLOCATIONS while allocations or live leases remain; --wait S waits for active
ones and live leases (NODE_WAIT_TIMEOUT); stranded ones (a lost node of a stateful pool) are refused at
once, naming fleetkit alloc release --stranded NODE --yes. In one transaction holding the node row: check again, revoke every certificate,
fail its queued jobs, set retired. Only after that commit is the node's Hetzner Cloud volume (node provision
--volume) detached and kept, or deleted with --delete-volume, and its server deleted (by its recorded ID, else
its fleetkit.node_id label); a failed step is PROVIDER_VOLUME_DETACH_FAILED, PROVIDER_DELETE_FAILED or
PROVIDER_VOLUME_DELETE_FAILED and stays recorded: running the command again retries it (with --delete-volume,
on a retired node too, a kept volume is deleted). A node with a server or volume to release needs the token
(--token-env, HETZNER_API_TOKEN by default): without it, PROVIDER_TOKEN_MISSING and nothing changes.
Once the retirement is committed, and before a server is deleted, it stops the node's agent over SSH
(systemctl disable --now fleetkit-agent.service, logging in only when the host presents its pinned key, as
sync does; the node's ssh block from --definition (./fleet.yaml by default), else the state's address as root): reported as agentStop.
An unreachable host never blocks it: the line says so, and the agent stops itself when the gateway refuses
its revoked certificate. Running it again is safe (and tries the agent again). Rows, certificates and events are kept.
Irreversible: the id can never be enrolled again (and a deleted volume's data is gone). On a terminal it asks
first (y/N), naming the node and the volume it deletes;
without one, or with --json, it needs --yes (CONFIRMATION_REQUIRED otherwise).`
  static override examples = [
    '<%= config.bin %> <%= command.id %> build-01',
    '<%= config.bin %> <%= command.id %> build-01 --wait 600 --yes --json',
    '<%= config.bin %> <%= command.id %> build-01 --delete-volume',
  ]
  static override args = { node: Args.string({ description: 'node id', required: true }) }
  static override flags = {
    wait: Flags.integer({ summary: 'Seconds to wait for its allocations and live leases to end.', min: 1, max: 86400 }),
    'state-dir': stateDirFlag(),
    yes: yesFlag('Retire without asking; needed without a terminal and with --json.'),
    'token-env': Flags.string({
      summary: 'The environment variable holding the Hetzner Cloud token, for a node with a server to delete.',
      env: 'FLEETKIT_PROVIDER_TOKEN_ENV',
      default: 'HETZNER_API_TOKEN',
      helpValue: 'NAME',
    }),
    'api-url': Flags.string({ summary: 'The Hetzner Cloud API root.', env: 'HETZNER_API_URL', helpValue: 'URL' }),
    definition: definitionFlag(
      "The fleet definition whose ssh block reaches the node, to stop its agent (when ./fleet.yaml is absent and no path is given: the state's address, as root).",
    ),
    'delete-volume': Flags.boolean({
      summary: "Delete the node's provider volume (and its data) once detached; without it the volume is kept.",
      default: false,
    }),
  }

  async run(): Promise<DecommissionResult> {
    const { args, flags, raw } = await this.parse(NodeDecommission)
    const { decommissionNode } = await import('../../lifecycle/node/node-decommission.js')
    const { providerClient } = await import('../../provider/provider-client.js')
    const { stopNodeAgent } = await import('../../sync/agent-stop.js')
    // Read before the state opens: a definition that does not load fails before anything changes.
    const { loadDefinition } = await import('../../definition/load.js')
    // The default ./fleet.yaml may be absent (a control host without the fleet's repository); a path the
    // operator named, by flag or FLEETKIT_DEFINITION, must load.
    const named =
      raw.some((token) => token.type === 'flag' && token.flag === 'definition') ||
      process.env.FLEETKIT_DEFINITION !== undefined
    const definition =
      named || existsSync(flags.definition) ? await loadDefinition(flags.definition) : { nodes: [], pools: {} }
    const result = await this.withState(
      { stateDir: flags['state-dir'], interruptible: true },
      ({ pool, actor, clock, signal }) =>
        decommissionNode({
          pool,
          nodeId: args.node,
          actor,
          clock,
          signal,
          confirm: this.confirmation(flags.yes),
          deleteVolume: flags['delete-volume'],
          stopAgent: (node) => stopNodeAgent(definition, node, process.env),
          provider: () =>
            providerClient(pool, undefined, {
              env: process.env,
              tokenEnv: flags['token-env'],
              ...(flags['api-url'] ? { apiUrl: flags['api-url'] } : {}),
            }),
          ...(flags.wait === undefined ? {} : { waitSeconds: flags.wait }),
        }),
    )
    this.log(result.message)
    return result
  }
}
