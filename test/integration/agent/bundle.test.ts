// The agent bundle as it ships: built once per run by scripts/build-agent.mjs, copied to an extensionless file
// away from the repository (no node_modules, no tsx, no package.json), run with plain node.
import assert from 'node:assert/strict'
import { chmod, mkdtemp, readFile, rm, stat, symlink } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { identityPaths, stageIdentity } from '../../../src/agent/identity.js'
import { packagePath } from '../../../src/package-root.js'
import { copyAgentBundle } from '../../support/agent-bundle.js'
import { makeTestIdentity } from '../../support/agent-identity.js'
import { runProcess } from '../../support/process.js'

/** The Node.js that runs the bundle: this one, or another (e.g. Node 18, as Ubuntu 24.04 ships) named by FLEETKIT_AGENT_TEST_NODE. */
const agentNode = process.env.FLEETKIT_AGENT_TEST_NODE || process.execPath

interface Outcome {
  code: number
  stdout: string
  stderr: string
}

async function runBundle(bundle: string, args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  const { code, stdout, stderr } = await runProcess(agentNode, [bundle, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    cwd: tmpdir(),
  })
  return { code, stdout, stderr }
}

describe('fleetkit-agent bundle', function () {
  this.timeout(60_000)
  let dir: string
  let bundle: string

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-agent-bundle-'))
    bundle = join(dir, 'fleetkit-agent')
    await copyAgentBundle(bundle)
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('is one executable CommonJS file with a node shebang (Node 18 loads an extensionless file as CommonJS)', async () => {
    const text = await readFile(bundle, 'utf8')
    assert.ok(text.startsWith('#!/usr/bin/env node\n'))
    assert.ok(((await stat(bundle)).mode & 0o111) !== 0)
    assert.doesNotMatch(text, /@oclif\/core/)
    assert.doesNotMatch(text, /^import .* from /m)
  })

  it('prints the package version with --version, outside the repository', async () => {
    const pkg = JSON.parse(await readFile(packagePath('package.json'), 'utf8')) as { version: string }
    const outcome = await runBundle(bundle, ['--version'])
    assert.equal(outcome.code, 0)
    assert.equal(outcome.stdout.trim(), pkg.version)
  })

  it('prints errors as "Error (CODE): message" with the code\'s exit status, and logs JSON lines', async () => {
    const usage = await runBundle(bundle, ['frobnicate'], { FLEETKIT_AGENT_CONFIG: join(dir, 'agent.env-absent-ok') })
    assert.equal(usage.code, 78, usage.stderr) // an explicit config file that does not exist
    assert.match(usage.stderr, /^Error \(AGENT_CONFIG_INVALID\): cannot read the agent configuration/m)

    const unknown = await runBundle(bundle, ['frobnicate', '--pki-dir', join(dir, 'pki')])
    assert.equal(unknown.code, 2)
    assert.match(unknown.stderr, /^Error \(USAGE_INVALID\): unknown command "frobnicate"$/m)

    const enroll = await runBundle(bundle, ['enroll', '--pki-dir', join(dir, 'pki')])
    assert.equal(enroll.code, 78)
    assert.match(enroll.stderr, /^Error \(AGENT_CONFIG_INVALID\): FLEETKIT_NODE_ID is not set$/m)
    const logLine = enroll.stderr.split('\n').find((line) => line.startsWith('{'))
    const entry = JSON.parse(logLine!) as { msg: string; code: string; component: string; level: string; time: string }
    assert.deepEqual(
      [entry.component, entry.level, entry.msg, entry.code],
      ['agent', 'error', 'agent_failed', 'AGENT_CONFIG_INVALID'],
    )
    assert.ok(!Number.isNaN(Date.parse(entry.time)))
  })

  it('runs doctor with one line per check and fails without an identity', async () => {
    const outcome = await runBundle(bundle, ['doctor', '--pki-dir', join(dir, 'pki'), '--host-root', dir])
    assert.equal(outcome.code, 1)
    const lines = outcome.stdout.trim().split('\n')
    assert.deepEqual(
      lines.map((line) => line.split(/\s+/)[1]),
      [
        'host:br-netfilter',
        'host:data-volume',
        'host:disk-free',
        'agent:certificate',
        'agent:gateway',
        'agent:clock-skew',
      ],
    )
    assert.match(outcome.stdout, /^fail host:br-netfilter +\(BR_NETFILTER_OFF\)/m)
    assert.match(outcome.stdout, /^fail agent:certificate +\(IDENTITY_MISSING\)/m)
  })

  it('refuses a key that group or others may read, or a link, with AGENT_KEY_PERMISSIONS before it talks to the gateway', async () => {
    // A plain TCP listener as the gateway: any connection would mean the key was about to be used.
    let connections = 0
    const listener = createServer((socket) => {
      connections++
      socket.destroy()
    })
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
    try {
      const pkiDir = join(dir, 'loose-pki')
      const now = Date.now()
      const identity = await makeTestIdentity('node-loose', new Date(now - 60_000), new Date(now + 86_400_000))
      await stageIdentity(pkiDir, identity.keyPem, identity.certificatePem, identity.caPem)
      const key = identityPaths(pkiDir).key
      const args = [
        '--pki-dir',
        pkiDir,
        '--node-id',
        'node-loose',
        '--gateway-url',
        `https://127.0.0.1:${(listener.address() as { port: number }).port}`,
        '--host-root',
        dir,
      ]
      for (const mode of [0o640, 0o604, 0o660]) {
        await chmod(key, mode)
        for (const command of ['run', 'renew-certificate']) {
          const outcome = await runBundle(bundle, [command, ...args])
          assert.equal(outcome.code, 78, `${command} ${mode.toString(8)}: ${outcome.stderr}`)
          assert.match(
            outcome.stderr,
            new RegExp(
              `^Error \\(AGENT_KEY_PERMISSIONS\\): the agent key ${key} is readable or writable by group or others \\(mode 0${mode.toString(8)}\\); refusing to use it$`,
              'm',
            ),
          )
          assert.match(outcome.stderr, /chmod 0600 /)
          assert.doesNotMatch(outcome.stderr, /PRIVATE KEY/)
        }
      }
      const doctor = await runBundle(bundle, ['doctor', ...args])
      assert.match(doctor.stdout, /^fail agent:certificate +\(AGENT_KEY_PERMISSIONS\)/m)

      // A link to a private-looking key elsewhere is refused too: the agent does not follow it.
      await chmod(key, 0o600)
      const linked = join(dir, 'linked-pki')
      await stageIdentity(linked, identity.keyPem, identity.certificatePem, identity.caPem)
      await rm(identityPaths(linked).key)
      await symlink(key, identityPaths(linked).key)
      const viaLink = await runBundle(bundle, ['run', '--pki-dir', linked, ...args.slice(2)])
      assert.equal(viaLink.code, 78, viaLink.stderr)
      assert.match(
        viaLink.stderr,
        /^Error \(AGENT_KEY_PERMISSIONS\): the agent key .* is a symbolic link; refusing to use it$/m,
      )
      assert.equal(connections, 0, 'the gateway was contacted with a refused key')
    } finally {
      await new Promise((resolve) => listener.close(resolve))
    }
  })

  it('`run` refuses a PKI directory that group or others may write, at start, with AGENT_CONFIG_INVALID before it talks to the gateway', async () => {
    let connections = 0
    const listener = createServer((socket) => {
      connections++
      socket.destroy()
    })
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
    try {
      const pkiDir = join(dir, 'open-dir-pki')
      const now = Date.now()
      const identity = await makeTestIdentity('node-open-dir', new Date(now - 60_000), new Date(now + 86_400_000))
      // A valid identity, staged while the directory was private: only the directory's mode is wrong.
      await stageIdentity(pkiDir, identity.keyPem, identity.certificatePem, identity.caPem)
      const gatewayUrl = `https://127.0.0.1:${(listener.address() as { port: number }).port}`
      const args = ['--pki-dir', pkiDir, '--node-id', 'node-open-dir', '--gateway-url', gatewayUrl, '--host-root', dir]
      for (const mode of [0o770, 0o707, 0o777]) {
        await chmod(pkiDir, mode)
        const outcome = await runBundle(bundle, ['run', ...args])
        assert.equal(outcome.code, 78, `run ${mode.toString(8)}: ${outcome.stderr}`)
        assert.match(
          outcome.stderr,
          new RegExp(
            `^Error \\(AGENT_CONFIG_INVALID\\): the agent PKI directory ${pkiDir} is writable by group or others \\(mode 0${mode.toString(8)}\\); refusing to keep a key there$`,
            'm',
          ),
        )
        assert.match(outcome.stderr, new RegExp(`chmod 0700 ${pkiDir}`))
      }
      assert.equal(connections, 0, 'the gateway was contacted from a PKI directory others may write')
    } finally {
      await chmod(join(dir, 'open-dir-pki'), 0o700).catch(() => undefined)
      await new Promise((resolve) => listener.close(resolve))
    }
  })
})
