// Every worker and agent seed the tests render passes Debian's real `cloud-init schema`; a known-bad
// file fails it, so a checker that silently accepts everything cannot pass this suite.
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { loadDefinition } from '../../../src/definition/load.js'
import { packagePath } from '../../../src/package-root.js'
import { IMAGE_DROPINS } from '../../../src/provider/local-cloud/image-recipe.js'
import { seededRng } from '../../../src/config/rng.js'
import { newEnrollmentSecret } from '../../../src/render/enrollment-secret.js'
import { agentSeedDocument, nodeTarget, workerSeedDocument } from '../../../src/render/seed-documents.js'
import { generateSshHostKey } from '../../../src/render/ssh-host-key.js'
import { DEFAULT_SUDO_RULE, renderWorkerSeed } from '../../../src/render/worker-seed.js'
import { overlayEnv, runProcess, runProcessOk } from '../../support/process.js'
import { workerSeedCases } from '../../support/worker-seed-cases.js'

export async function cloudInitSchema(file: string): Promise<{ ok: boolean; output: string }> {
  const { code, stdout, stderr } = await runProcess(packagePath('scripts', 'cloud-init-schema'), [file])
  return { ok: code === 0, output: stdout + stderr }
}

describe('render: worker seeds pass the real cloud-init schema', function () {
  this.timeout(300_000)
  let dir: string

  before(async () => {
    if (
      !existsSync(packagePath('.cache', 'cloud-init', 'usr', 'bin', 'cloud-init')) ||
      !existsSync(packagePath('.cache', 'sudo'))
    ) {
      await runProcessOk('bash', [packagePath('scripts', 'install-cloud-init-schema')])
    }
    dir = mkdtempSync(join(tmpdir(), 'fleetkit-cloud-init-'))
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('refuses the known-bad fixture (the checker works)', async () => {
    const result = await cloudInitSchema(packagePath('test', 'fixtures', 'cloud-init', 'known-bad.yaml'))
    assert.equal(result.ok, false, result.output)
    assert.match(result.output, /schema errors/i)
  })

  it('accepts every golden worker seed and agent seed cloud-config', async () => {
    const files = readdirSync(packagePath('test', 'golden')).filter(
      (f) => f.startsWith('worker-seed-') || (f.startsWith('agent-seed-') && f.endsWith('.yaml')),
    )
    assert.ok(files.length >= 4)
    for (const file of files) {
      const result = await cloudInitSchema(packagePath('test', 'golden', file))
      assert.ok(result.ok, `${file}: ${result.output}`)
    }
  })

  it('accepts the worker seed of every example node, plain and for autoinstall', async () => {
    const definition = await loadDefinition(packagePath('examples', 'fleet.yaml'))
    for (const node of definition.nodes) {
      for (const autoinstall of [false, true]) {
        const path = join(dir, `${node.id}-${autoinstall}.yaml`)
        const target = nodeTarget(definition, node.id, undefined)
        writeFileSync(
          path,
          workerSeedDocument(definition, target, generateSshHostKey(node.id, seededRng(node.id)), autoinstall),
        )
        const result = await cloudInitSchema(path)
        assert.ok(result.ok, `${node.id} autoinstall=${autoinstall}: ${result.output}`)
      }
    }
  })

  it('accepts the agent seed of every example node, with and without a declared ssh.user', async () => {
    const definition = await loadDefinition(packagePath('examples', 'fleet.yaml'))
    const ca = readFileSync(packagePath('test', 'fixtures', 'cloud-init', 'gateway-ca-bundle.pem'), 'utf8')
    const secret = newEnrollmentSecret(seededRng('schema')).secret
    for (const node of definition.nodes) {
      const declared = nodeTarget(definition, node.id, undefined)
      for (const target of [declared, { ...declared, sshUser: undefined, sshPort: undefined }]) {
        const hostKey = target.sshUser === undefined ? undefined : generateSshHostKey(node.id, seededRng(node.id))
        const path = join(dir, `agent-${node.id}-${target.sshUser ?? 'none'}.yaml`)
        writeFileSync(path, agentSeedDocument(definition, target, ca, secret, undefined, hostKey))
        const result = await cloudInitSchema(path)
        assert.ok(result.ok, `agent seed of ${node.id} (ssh.user ${target.sshUser ?? 'none'}): ${result.output}`)
      }
    }
  })

  it('accepts every worker seed the unit tests render', async () => {
    for (const [name, input] of Object.entries(workerSeedCases())) {
      const path = join(dir, `unit-${name}.yaml`)
      writeFileSync(path, renderWorkerSeed(input))
      const result = await cloudInitSchema(path)
      assert.ok(result.ok, `${name}: ${result.output}`)
    }
  })

  it("accepts the cloud.cfg.d drop-ins of the local cloud's image and the test hosts' image", async () => {
    // cloud-init validates the system configuration merged with the seed at every boot: a drop-in the schema
    // refuses (`users: []` once) made every machine warn "Invalid cloud-config provided" whatever its seed.
    const testHosts = packagePath('test', 'hosts', 'image', 'dropins', 'etc', 'cloud', 'cloud.cfg.d')
    const dropins = [
      ...Object.entries(IMAGE_DROPINS).filter(([path]) => path.startsWith('etc/cloud/cloud.cfg.d/')),
      ...readdirSync(testHosts).map((f) => [`test hosts ${f}`, readFileSync(join(testHosts, f), 'utf8')] as const),
    ]
    assert.ok(dropins.length >= 2)
    for (const [i, [name, text]] of dropins.entries()) {
      const path = join(dir, `dropin-${i}.yaml`)
      writeFileSync(path, `#cloud-config\n${text}`)
      const result = await cloudInitSchema(path)
      assert.ok(result.ok, `${name}: ${result.output}`)
    }
  })

  it('renders a sudoers rule that visudo -cf accepts, and visudo refuses a broken one', async () => {
    // The distribution's visudo, or the copy scripts/install-cloud-init-schema unpacked.
    const cached = packagePath('.cache', 'sudo', 'usr', 'sbin', 'visudo')
    const visudo = ['/usr/sbin/visudo', '/usr/bin/visudo'].find((p) => existsSync(p)) ?? cached
    const env = overlayEnv({ LD_LIBRARY_PATH: packagePath('.cache', 'sudo', 'usr', 'libexec', 'sudo') })
    const good = join(dir, 'sudoers')
    writeFileSync(good, `ops ${DEFAULT_SUDO_RULE}\n`, { mode: 0o440 })
    await runProcessOk(visudo, ['-cf', good], { env })
    const bad = join(dir, 'sudoers-bad')
    writeFileSync(bad, `ops ${DEFAULT_SUDO_RULE},\n`, { mode: 0o440 })
    await assert.rejects(runProcessOk(visudo, ['-cf', bad], { env }))
  })
})
