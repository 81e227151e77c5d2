// `fleetkit node replace NODE [--as NEW]`: a like-for-like node provisioned and enrolled, then the
// old one drained (src/lifecycle/provision/node-replace.ts).
import { dirname } from 'node:path'

import { Args, Flags } from '@oclif/core'

import { envWithStateDir } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import { assertNotExample } from '../../definition/example-guard.js'
import { loadDefinition } from '../../definition/load.js'
import type { ReplaceResult } from '../../lifecycle/provision/node-replace.js'
import { provisionCommonFlags } from '../../cli/provision-flags.js'

export default class NodeReplace extends FleetkitCommand<ReplaceResult> {
  static override summary = 'Provision a like-for-like node, wait for it to enroll, then drain the old one.'
  static override description = `The new node has the old one's pool, region, server type and image and a copy of its
fleet.yaml declaration under the new id: --as NEW, else NODE-r2 (NODE-rN becomes NODE-r(N+1)). Refused
with NODE_NOT_PROVIDER_MANAGED for a node fleetkit did not provision. Run it again to resume an
interrupted replacement. Then declare NEW in fleet.yaml and decommission NODE once it is drained.`
  static override examples = [
    '<%= config.bin %> <%= command.id %> build-2',
    '<%= config.bin %> <%= command.id %> build-2 --as build-7 --json',
  ]
  static override args = { node: Args.string({ description: 'the node to replace', required: true }) }
  static override flags = {
    ...provisionCommonFlags,
    as: Flags.string({ summary: 'The new node id (default NODE-r2, or the next -rN).' }),
  }

  async run(): Promise<ReplaceResult> {
    const { args, flags } = await this.parse(NodeReplace)
    const { replaceNode } = await import('../../lifecycle/provision/node-replace.js')
    const { parseWait } = await import('../../lifecycle/provision/provision-plan.js')
    const { readSeedFiles } = await import('../../lifecycle/seed/seed-files.js')
    const { provisionRuntime } = await import('../../cli/provision-runtime.js')
    const { apiTokenFromEnv, DEFAULT_TOKEN_ENV } = await import('../../provider/api-token.js')
    const waitMs = parseWait(flags.wait)
    const definition = await loadDefinition(flags.definition)
    // Documentation addresses and placeholder keys must never reach a provider.
    assertNotExample(definition, 'fleetkit node replace')
    apiTokenFromEnv(process.env, definition.providers?.hetzner?.tokenEnv ?? DEFAULT_TOKEN_ENV)
    const env = envWithStateDir(flags['state-dir'])
    const files = await readSeedFiles('agent', env, definition, dirname(flags.definition))
    const result = await this.withState({ stateDir: flags['state-dir'] }, ({ pool, actor, progress }) =>
      replaceNode({
        pool,
        oldId: args.node,
        ...(flags.as ? { newId: flags.as } : {}),
        actor,
        definition,
        files,
        ...provisionRuntime(pool, definition, flags['api-url']),
        waitMs,
        progress,
      }),
    )
    this.log(
      `${result.replacement.node} (server ${result.replacement.serverId}) replaces ${result.replaced}: ${result.drain.message}`,
    )
    this.log(
      `next: declare ${result.replacement.node} in fleet.yaml; fleetkit node decommission ${result.replaced} --wait 600`,
    )
    return result
  }
}
