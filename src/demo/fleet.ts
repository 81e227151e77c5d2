// The demo's fleet.yaml: examples/fleet.yaml with one node per pool (its first), pointed at the
// loopback gateway and release mirror; written into the workspace and loaded (validated) like any other.
// The demo provisions each node through the stub, so each is the server it makes: no ssh.host (its
// address is the server's, recorded by node provision) and no host key (its seed pins one).
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

import { parse, stringify } from 'yaml'

import { loadDefinition } from '../definition/load.js'
import type { Definition, NodeDeclaration } from '../definition/types.js'
import { packagePath } from '../package-root.js'

export interface DemoFleet {
  path: string
  definition: Definition
  /** One node per pool, in the pools' order. */
  nodes: NodeDeclaration[]
}

export async function writeDemoFleet(options: {
  dir: string
  gateway: { url: string; enrollUrl: string }
  release: { url: string; publicKey: string; version: string }
  releaseCaPem: string
}): Promise<DemoFleet> {
  const example = parse(await readFile(packagePath('examples', 'fleet.yaml'), 'utf8')) as Definition
  const nodes = Object.keys(example.pools).flatMap((pool) => {
    const first = example.nodes.find((n) => n.pool === pool)
    if (!first) return []
    // A host not built yet has no host key to pin: its seed generates one. Nor an address: the
    // example's made-up ssh.host would disagree with the server the stub gives it (NODE_ADDRESS_DISAGREES).
    const { hostKey: _hostKey, ssh, ...node } = first
    const account =
      ssh === undefined ? {} : { ssh: { user: ssh.user, ...(ssh.port === undefined ? {} : { port: ssh.port }) } }
    return [{ ...node, ...account, state: 'active' as const }]
  })
  await writeFile(join(options.dir, 'release-ca.pem'), options.releaseCaPem)
  const demo: Definition = {
    ...example,
    gateway: options.gateway,
    release: { ...options.release, caFile: 'release-ca.pem' },
    nodes,
  }
  if (demo.canary && !nodes.some((n) => n.id === demo.canary)) delete demo.canary
  const path = join(options.dir, 'fleet.yaml')
  await writeFile(
    path,
    `# fleetkit demo: examples/fleet.yaml, one node per pool, on loopback (example: true, fictional addresses).\n${stringify(demo)}`,
  )
  const definition = await loadDefinition(path)
  return { path, definition, nodes: definition.nodes }
}
