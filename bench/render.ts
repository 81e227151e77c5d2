// Rendering figures: the inventory of a 10,000-node fleet and 1,000 agent seeds.
// Run: npx tsx bench/render.ts. Prints the figures as the markdown docs/performance.md keeps;
// it writes nothing (paste the table into docs/performance.md when the figures should be recorded).
import { cpus } from 'node:os'
import { performance } from 'node:perf_hooks'

import { loadHostPolicy } from '../src/definition/host-policy.js'
import type { Definition, NodeDeclaration } from '../src/definition/types.js'
import { createCertificateAuthority } from '../src/pki/certificate-authority.js'
import { renderAgentSeed } from '../src/render/agent-seed.js'
import { seededRng } from '../src/config/rng.js'
import { newEnrollmentSecret } from '../src/render/enrollment-secret.js'
import { type InventoryStateNode, renderInventory } from '../src/render/inventory.js'
import { fitSeedBudget } from '../src/render/seed-budget.js'
import { generateSshHostKey } from '../src/render/ssh-host-key.js'

const NODES = 10_000
const SEEDS = 1_000
const rng = seededRng('bench')

function fleet(): { definition: Definition; state: InventoryStateNode[] } {
  const pools = ['build', 'application', 'database', 'cache']
  const nodes: NodeDeclaration[] = []
  const state: InventoryStateNode[] = []
  // Half declared (own hardware), half provisioned (only in the state), like a mixed fleet.
  for (let i = 0; i < NODES; i++) {
    const id = `node-${String(i).padStart(5, '0')}`
    const pool = pools[i % pools.length]!
    const key = generateSshHostKey(id, rng).publicKey
    if (i % 2 === 0) {
      nodes.push({
        id,
        pool,
        state: 'active',
        region: i % 3 === 0 ? 'fsn1' : 'nbg1',
        ssh: { host: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, user: 'fleetkit' },
        hostKey: key,
        dataVolume: { device: '/dev/sdb', filesystem: 'xfs', mountPoint: '/srv/fleetkit' },
      })
    } else {
      state.push({
        id,
        pool,
        region: 'hel1',
        status: i % 50 === 1 ? 'parked' : 'active',
        sshHost: `10.200.${(i >> 8) & 255}.${i & 255}`,
        hostKeyPublic: key,
      })
    }
  }
  const budget = { cpu: 100_000, memoryMiB: 100_000_000, diskGiB: 10_000_000 }
  return {
    definition: {
      version: 1,
      fleet: 'bench',
      gateway: { url: 'https://gateway.example.net:8443', enrollUrl: 'https://enroll.example.net:8444' },
      release: {
        url: 'https://releases.example.net/fleetkit-agent',
        publicKey: Buffer.alloc(32, 9).toString('base64'),
        version: '1.2.3',
      },
      operators: { cidrs: ['192.0.2.0/24'], sshKeys: [] },
      features: { containers: true },
      exposure: { publicSsh: false, otherListeners: 'fail' },
      pools: Object.fromEntries(
        pools.map((p) => [
          p,
          {
            role: p,
            capacityBudget: budget,
            dockerNetworkPolicy: {
              base: '10.210.0.0/16',
              prefix: 24,
              maxRunners: 8,
              networksPerRunner: 2,
              reserveSubnets: 4,
            },
          },
        ]),
      ),
      nodes,
      canary: 'node-00000',
    },
    state,
  }
}

function time<T>(fn: () => T): { ms: number; value: T } {
  const start = performance.now()
  const value = fn()
  return { ms: performance.now() - start, value }
}

const { definition, state } = fleet()
const hostPolicy = loadHostPolicy()
renderInventory({
  definition,
  stateNodes: state.slice(0, 100),
  hostPolicy,
  knownHostsPath: '/srv/fleetkit/ansible/known_hosts',
})
const inventory = time(() =>
  renderInventory({ definition, stateNodes: state, hostPolicy, knownHostsPath: '/srv/fleetkit/ansible/known_hosts' }),
)

// A CA made now, as `fleetkit ca init` would (benchmarks read nothing under test/).
const ca = (await createCertificateAuthority({ now: new Date(), commonName: 'fleetkit bench CA' })).certificatePem
const seeds = time(() => {
  let bytes = 0
  for (let i = 0; i < SEEDS; i++) {
    const secret = newEnrollmentSecret(rng)
    const seed = renderAgentSeed({
      nodeId: `node-${i}`,
      gatewayUrl: definition.gateway.url,
      enrollUrl: definition.gateway.enrollUrl,
      caBundlePem: ca,
      releaseUrl: definition.release.url,
      releasePublicKey: definition.release.publicKey,
      releaseVersion: definition.release.version,
      enrollmentSecret: secret.secret,
      dataMount: '/srv/fleetkit',
      guard: { operatorCidrs: definition.operators.cidrs },
    })
    bytes = fitSeedBudget(seed).bytes.length
  }
  return bytes
})

const mib = (n: number) => (n / 1024 / 1024).toFixed(1)
console.log(
  `### Rendering (${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${cpus().length} x ${cpus()[0]?.model.trim() ?? 'cpu'})`,
)
console.log('')
console.log('| what | size | time |')
console.log('| --- | --- | --- |')
console.log(
  `| inventory, ${NODES} nodes (${definition.nodes.length} declared, ${state.length} in the state, ${inventory.value.excluded.length} parked) | ${inventory.value.hosts.length} hosts, ${inventory.value.groups.length} groups, ${mib(inventory.value.yaml.length)} MiB YAML | ${inventory.ms.toFixed(0)} ms |`,
)
console.log(
  `| agent seeds (validate, render, budget), ${SEEDS} | ${seeds.value} bytes each | ${seeds.ms.toFixed(0)} ms (${(seeds.ms / SEEDS).toFixed(2)} ms per seed) |`,
)
