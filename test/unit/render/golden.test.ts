// Golden files for the example fleet: a change to a rendered seed or inventory shows up
// in review. UPDATE_GOLDEN=1 rewrites them from the current renderers.
import assert from 'node:assert/strict'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'

import { parse, stringify } from 'yaml'

import { loadDefinition } from '../../../src/definition/load.js'
import type { Definition } from '../../../src/definition/types.js'
import { packagePath } from '../../../src/package-root.js'
import { seededRng } from '../../../src/config/rng.js'
import { AGENT_SEED_SCRIPT_PATH } from '../../../src/render/agent-seed.js'
import { newEnrollmentSecret } from '../../../src/render/enrollment-secret.js'
import { type InventoryStateNode, renderInventory } from '../../../src/render/inventory.js'
import { agentSeedDocument, nodeTarget, workerSeedDocument } from '../../../src/render/seed-documents.js'
import { generateSshHostKey } from '../../../src/render/ssh-host-key.js'

export const GOLDEN_KNOWN_HOSTS = '/srv/fleetkit-operator/ansible/known_hosts'

/**
 * The state the golden inventory is rendered against: two provisioned nodes (build-2, declared without
 * ssh.host, and build-7, in the state only: each reached at its server's recorded address), a parked
 * and a retired one.
 */
export const GOLDEN_STATE: InventoryStateNode[] = [
  { id: 'build-1', pool: 'build', region: 'fsn1', status: 'active', hostKeyPublic: null, sshHost: null },
  {
    id: 'build-2',
    pool: 'build',
    region: 'fsn1',
    status: 'draining',
    provisionState: 'enrolled',
    provider: 'hetzner',
    providerServerId: '4702',
    publicIpv4: '192.0.2.12',
    publicIpv6: '2001:db8:12::',
    hostKeyPublic: null,
    sshHost: null,
  },
  { id: 'build-3', pool: 'build', region: 'fsn1', status: 'parked', hostKeyPublic: null, sshHost: null },
  { id: 'db-1', pool: 'database', region: 'fsn1', status: 'unhealthy', hostKeyPublic: null, sshHost: null },
  {
    id: 'build-7',
    pool: 'build',
    region: 'nbg1',
    status: 'provisioning',
    provisionState: 'awaiting_enrollment',
    provider: 'hetzner',
    providerServerId: '4707',
    publicIpv4: '192.0.2.17',
    publicIpv6: '2001:db8:17::',
    hostKeyPublic: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBX6gC9vbeVmxoHXjt4YrlWnIuPu/3hbYNyVHsYpvYx0 build-7',
    sshHost: null,
  },
  { id: 'app-9', pool: 'application', region: 'fsn1', status: 'retired', hostKeyPublic: null, sshHost: '192.0.2.99' },
]

function golden(name: string, actual: string): void {
  const path = packagePath('test', 'golden', name)
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(path, actual)
  assert.ok(existsSync(path), `${path} is missing: run UPDATE_GOLDEN=1 npx mocha test/unit/render/golden.test.ts`)
  assert.equal(
    actual,
    readFileSync(path, 'utf8'),
    `${name} differs from its golden file (UPDATE_GOLDEN=1 rewrites it; review the diff)`,
  )
}

describe('render: golden files of the example fleet', () => {
  let definition: Definition
  const ca = readFileSync(packagePath('test', 'fixtures', 'cloud-init', 'gateway-ca-bundle.pem'), 'utf8')

  before(async () => {
    definition = await loadDefinition(packagePath('examples', 'fleet.yaml'))
  })

  /** NODE.yaml: the cloud-config with the script's place marked; NODE.sh: the script, the verifier's place marked. */
  function goldenAgentSeed(node: string): void {
    const secret = newEnrollmentSecret(seededRng('golden-secret')).secret
    const hostKey = generateSshHostKey(node, seededRng('golden-host-key'))
    const seed = agentSeedDocument(definition, nodeTarget(definition, node, undefined), ca, secret, undefined, hostKey)
    const doc = parse(seed) as { write_files: { path: string; content: string }[] }
    const script = doc.write_files.find((f) => f.path === AGENT_SEED_SCRIPT_PATH)!
    // The verifier has its own file and review; seeds.test.ts proves it is embedded byte for byte.
    const verifier = readFileSync(packagePath('cloud-init', 'verify-release.sh'), 'utf8').trimEnd()
    assert.ok(script.content.includes(verifier))
    golden(
      `agent-seed-${node}.sh`,
      script.content.replace(verifier, '# cloud-init/verify-release.sh is embedded here, byte for byte'),
    )
    script.content = `# the enrollment script: test/golden/agent-seed-${node}.sh`
    golden(`agent-seed-${node}.yaml`, `#cloud-config\n${stringify(doc, { lineWidth: 0 })}`)
  }

  it('agent seed of build-1: its cloud-config (account, pinned host key, guard) and its enrollment script', () => {
    goldenAgentSeed('build-1')
  })

  it('worker seed of app-1, plain and for autoinstall', () => {
    const target = nodeTarget(definition, 'app-1', undefined)
    golden(
      'worker-seed-app-1.yaml',
      workerSeedDocument(definition, target, generateSshHostKey('app-1', seededRng('golden-host-key')), false),
    )
    golden(
      'worker-seed-app-1-autoinstall.yaml',
      workerSeedDocument(definition, target, generateSshHostKey('app-1', seededRng('golden-host-key')), true),
    )
  })

  it('worker seed of app-2: sshd on its declared ssh.port 2222', () => {
    const target = nodeTarget(definition, 'app-2', undefined)
    golden(
      'worker-seed-app-2.yaml',
      workerSeedDocument(definition, target, generateSshHostKey('app-2', seededRng('golden-host-key')), false),
    )
  })

  it('agent seed of build-3: no data volume, so no mount condition', () => {
    goldenAgentSeed('build-3')
  })

  it('inventory and known_hosts', () => {
    const hostPolicy: unknown = parse(
      readFileSync(packagePath('test', 'fixtures', 'ansible', 'host-policy.yaml'), 'utf8'),
    )
    const rendered = renderInventory({
      definition,
      stateNodes: GOLDEN_STATE,
      hostPolicy,
      knownHostsPath: GOLDEN_KNOWN_HOSTS,
    })
    golden('inventory.yml', rendered.yaml)
    golden('known_hosts', rendered.knownHosts)
  })
})
