// `fleetkit inventory`: reads the nodes from the state, renders the inventory and writes it
// with its known_hosts file beside it (the inventory names that file by absolute path);
// with "-" the inventory goes to stdout and known_hosts to the state directory.
import { writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'

import type { Env } from '../../config/state-dir.js'
import { resolveStateDir } from '../../config/state-dir.js'
import { loadHostPolicy } from '../../definition/host-policy.js'
import type { Definition } from '../../definition/types.js'
import { type InventoryStateNode, renderInventory } from '../../render/inventory.js'
import type { Queryable } from '../../store/database.js'
import { listNodes } from '../../store/nodes/nodes.js'
import { outputWriteFailed, type Sink } from '../output-sink.js'
import { readReleaseCa } from '../../render/release-ca.js'
import { readGatewayCaBundle } from './seed-files.js'
import { makeDirectories } from '../../fs/make-directories.js'

export interface WriteInventoryOptions {
  definition: Definition
  /** Where to write the inventory; "-" for `stdout`; default <state dir>/ansible/inventory.yml. */
  outputPath?: string
  /** Where "-" writes. */
  stdout?: Sink
  env: Env
  /** Nodes from the state (readStateNodes). */
  stateNodes: readonly InventoryStateNode[]
  /** Where a relative release.caFile is resolved from (the definition's directory). */
  definitionDir?: string
}

export interface WriteInventoryResult {
  /**
   * The inventory file, or null when it went to stdout.
   * @pattern ^/
   */
  path: string | null
  /** @pattern ^/ */
  knownHostsPath: string
  /**
   * @minimum 0
   * @asType integer
   */
  hosts: number
  groups: string[]
  unpinned: string[]
  excluded: string[]
  /** Nodes of a pool with a provider left out for want of an address, each with why and what to run. */
  unprovisioned: { node: string; reason: string; action: string }[]
}

function defaultInventoryPath(env: Env): string {
  return join(resolveStateDir(env), 'ansible', 'inventory.yml')
}

/** The nodes the inventory reads, from the command's pool (the command opens and closes it). */
export async function readStateNodes(q: Queryable): Promise<InventoryStateNode[]> {
  return (await listNodes(q)).map((n) => ({
    id: n.id,
    pool: n.pool,
    region: n.region,
    status: n.status,
    provisionState: n.provisionState,
    provider: n.provider,
    providerServerId: n.providerServerId,
    publicIpv4: n.publicIpv4,
    publicIpv6: n.publicIpv6,
    hostKeyPublic: n.hostKeyPublic,
    sshHost: n.sshHost,
    volumeState: n.volumeState,
    volumeLinuxDevice: n.volumeLinuxDevice,
  }))
}

export async function writeInventory(options: WriteInventoryOptions): Promise<WriteInventoryResult> {
  const toStdout = options.outputPath === '-'
  const path = toStdout ? null : resolve(options.outputPath ?? defaultInventoryPath(options.env))
  // The inventory names known_hosts by absolute path, so on stdout it still needs a home.
  const knownHostsPath = join(dirname(path ?? defaultInventoryPath(options.env)), 'known_hosts')
  const { stateNodes } = options
  const releaseCaPem = await readReleaseCa(options.definition, options.definitionDir ?? '.', () =>
    readGatewayCaBundle(options.env),
  )
  const rendered = renderInventory({
    definition: options.definition,
    stateNodes,
    hostPolicy: loadHostPolicy(),
    knownHostsPath,
    releaseCaPem,
  })
  try {
    await makeDirectories(dirname(knownHostsPath))
    await writeFile(knownHostsPath, rendered.knownHosts, { mode: 0o644 })
  } catch (error) {
    throw outputWriteFailed(knownHostsPath, error)
  }
  try {
    if (path === null) {
      if (!options.stdout) throw new Error('writeInventory: --output - needs a stdout sink')
      await options.stdout(rendered.yaml)
    } else {
      await writeFile(path, rendered.yaml, { mode: 0o644 })
    }
  } catch (error) {
    throw outputWriteFailed(path ?? '-', error)
  }
  return {
    path,
    knownHostsPath,
    hosts: rendered.hosts.length,
    groups: rendered.groups,
    unpinned: rendered.unpinned,
    excluded: rendered.excluded,
    unprovisioned: rendered.unprovisioned,
  }
}
