import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'

import { parse } from 'yaml'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { packagePath } from '../../../src/package-root.js'
import {
  AGENT_SEED_SCRIPT_PATH,
  type AgentSeedInput,
  renderAgentSeed,
  renderAgentSeedScript,
} from '../../../src/render/agent-seed.js'
import { gatewayUrlLists } from '../../../src/definition/gateway-urls.js'
import { firstBootGuardScript } from '../../../src/render/first-boot-guard.js'
import { seededRng } from '../../../src/config/rng.js'
import { newEnrollmentSecret } from '../../../src/render/enrollment-secret.js'
import { fitSeedBudget, SEED_BUDGET_BYTES } from '../../../src/render/seed-budget.js'
import { generateSshHostKey } from '../../../src/render/ssh-host-key.js'
import { parseSecretTtl } from '../../../src/render/ttl.js'
import { renderWorkerSeed } from '../../../src/render/worker-seed.js'
import { GUARD, OPERATOR_KEY, workerSeedCases } from '../../support/worker-seed-cases.js'
import { runProcessOk } from '../../support/process.js'

const CA = readFileSync(packagePath('test', 'fixtures', 'cloud-init', 'gateway-ca-bundle.pem'), 'utf8')
const SECRET = 'c0ffee'.repeat(10) + 'beef'

function agentInput(overrides: Partial<AgentSeedInput> = {}): AgentSeedInput {
  return {
    nodeId: 'build-1',
    gatewayUrl: 'https://gateway.example.net:8443',
    enrollUrl: 'https://enroll.example.net:8444',
    caBundlePem: CA,
    releaseUrl: 'https://releases.example.net/fleetkit-agent',
    releasePublicKey: 'n+InCdneGwlZ6eONSz31edBrrsLPqhbIZG5PXhE+Us8=',
    releaseVersion: '0.1.0',
    enrollmentSecret: SECRET,
    dataMount: '/srv/fleetkit',
    guard: GUARD,
    ...overrides,
  }
}

function code(fn: () => unknown): string {
  try {
    fn()
  } catch (error) {
    assert.ok(error instanceof FleetkitError, String(error))
    return error.code
  }
  assert.fail('expected a refusal')
}

/** The parsed cloud-config of a seed. */
function cloudConfig(text: string): Record<string, unknown> {
  assert.ok(text.startsWith('#cloud-config\n'))
  return parse(text) as Record<string, unknown>
}

describe('render: agent seed of a declared container', () => {
  it('agent.env says FLEETKIT_CONTAINER=true only for a node that declares container: true', () => {
    assert.match(renderAgentSeedScript(agentInput({ container: true })), /^FLEETKIT_CONTAINER=true$/m)
    assert.match(renderAgentSeedScript(agentInput()), /^FLEETKIT_CONTAINER=false$/m)
    assert.match(renderAgentSeedScript(agentInput({ container: false })), /^FLEETKIT_CONTAINER=false$/m)
  })
})

describe('render: agent seed', () => {
  it('is a #cloud-config: the first-boot guard at bootcmd, the enrollment script as a 0700 file on /run that runcmd runs', () => {
    const input = agentInput()
    const doc = cloudConfig(renderAgentSeed(input))
    assert.deepEqual(doc.bootcmd, [firstBootGuardScript(GUARD)])
    assert.deepEqual(doc.write_files, [
      { path: AGENT_SEED_SCRIPT_PATH, owner: 'root:root', permissions: '0700', content: renderAgentSeedScript(input) },
    ])
    assert.match(AGENT_SEED_SCRIPT_PATH, /^\/run\//)
    assert.deepEqual(doc.runcmd, [['bash', AGENT_SEED_SCRIPT_PATH]])
    // A node without ssh.user: no account, and cloud-init's own host keys (nothing is pinned).
    for (const key of ['users', 'ssh_keys', 'ssh_deletekeys', 'disable_root']) assert.equal(doc[key], undefined, key)
  })

  it("gives a node with ssh.user the worker seed's account, operators' keys and pinned host key, on its ssh.port", () => {
    const worker = workerSeedCases().sshPort
    const account = { user: worker.user, operatorKeys: worker.operatorKeys, hostKey: worker.hostKey, sshPort: 2222 }
    const agent = cloudConfig(renderAgentSeed(agentInput({ account, guard: { ...GUARD, sshPort: 2222 } })))
    const expected = cloudConfig(renderWorkerSeed(worker))
    for (const key of [
      'users',
      'disable_root',
      'ssh_pwauth',
      'ssh_deletekeys',
      'ssh_genkeytypes',
      'ssh_keys',
      'bootcmd',
    ])
      assert.deepEqual(agent[key], expected[key], key)
    // The sshd port drop-in and its restart come first; the enrollment script runs last.
    const files = agent.write_files as { path: string }[]
    assert.deepEqual(
      files.map((f) => f.path),
      ['/etc/ssh/sshd_config.d/10-fleetkit-port.conf', AGENT_SEED_SCRIPT_PATH],
    )
    assert.deepEqual(agent.runcmd, [...(expected.runcmd as unknown[]), ['bash', AGENT_SEED_SCRIPT_PATH]])
    // Unlike the worker seed it keeps the provider's hostname and updates no package list itself.
    assert.equal(agent.hostname, undefined)
    assert.equal(
      code(() => renderAgentSeed(agentInput({ account: { ...account, user: 'root' } }))),
      'SEED_VALUE_INVALID',
    )
  })

  it('the script is bash with set -euo pipefail whose heredocs are all quoted', () => {
    const seed = renderAgentSeedScript(agentInput())
    assert.ok(seed.startsWith('#!/bin/bash\n'))
    assert.match(seed, /^set -euo pipefail$/m)
    const template = readFileSync(packagePath('cloud-init', 'agent-seed.sh.tmpl'), 'utf8')
    const heredocs = [...template.matchAll(/<<-?\s*(\S+)/g)].map((m) => m[1]!)
    assert.ok(heredocs.length >= 8)
    for (const h of heredocs) assert.match(h, /^'[A-Z_]+'$/, `heredoc ${h} is quoted`)
    assert.doesNotMatch(seed, /@@[A-Z_]+@@/)
  })

  it('puts each value inside its heredoc only', () => {
    const seed = renderAgentSeedScript(agentInput())
    assert.equal(seed.split(SECRET).length, 2, 'the secret appears exactly once')
    assert.match(seed, /<<'FLEETKIT_ENROLLMENT_SECRET'\nc0ffee[0-9a-f]+\nFLEETKIT_ENROLLMENT_SECRET\n/)
    assert.match(seed, /^FLEETKIT_NODE_ID=build-1$/m)
    assert.match(seed, /^FLEETKIT_RELEASE_VERSION=0\.1\.0$/m)
    assert.match(seed, /^ConditionPathIsMountPoint=\/srv\/fleetkit$/m)
    assert.match(seed, /-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA/)
  })

  it('a node without a data volume gets a unit with no mount condition and an empty FLEETKIT_DATA_MOUNT', () => {
    const seed = renderAgentSeedScript(agentInput({ dataMount: undefined }))
    assert.doesNotMatch(seed, /ConditionPathIsMountPoint/)
    assert.match(seed, /^FLEETKIT_DATA_MOUNT=$/m)
    assert.match(seed, /^WantedBy=multi-user\.target$/m)
  })

  it("writes a gateway and its replicas comma-separated, as the agent role's vars join them", () => {
    const definition = {
      url: 'https://gw1.example.net:8443',
      enrollUrl: 'https://gw1.example.net:8444',
      replicas: [
        { url: 'https://gw2.example.net:8443', enrollUrl: 'https://gw2.example.net:8444' },
        { url: 'https://gw1.example.net:8443', enrollUrl: 'https://gw3.example.net:8444' },
      ],
    }
    const lists = gatewayUrlLists(definition)
    assert.deepEqual(lists.agent, ['https://gw1.example.net:8443', 'https://gw2.example.net:8443'])
    const seed = renderAgentSeedScript(
      agentInput({ gatewayUrl: lists.agent.join(','), enrollUrl: lists.enroll.join(',') }),
    )
    assert.match(seed, /^FLEETKIT_GATEWAY_URL=https:\/\/gw1\.example\.net:8443,https:\/\/gw2\.example\.net:8443$/m)
    assert.match(
      seed,
      /^FLEETKIT_ENROLL_URL=https:\/\/gw1\.example\.net:8444,https:\/\/gw2\.example\.net:8444,https:\/\/gw3\.example\.net:8444$/m,
    )
  })

  it('embeds the one release verifier byte for byte', () => {
    const verifier = readFileSync(packagePath('cloud-init', 'verify-release.sh'), 'utf8').trimEnd()
    assert.ok(
      renderAgentSeedScript(agentInput()).includes(
        `<<'FLEETKIT_VERIFY_RELEASE'\n${verifier}\nFLEETKIT_VERIFY_RELEASE\n`,
      ),
    )
  })

  it('refuses injected values with SEED_VALUE_INVALID before rendering anything', () => {
    const attempts: Partial<AgentSeedInput>[] = [
      { gatewayUrl: 'https://gateway.example.net/$(reboot)' },
      { gatewayUrl: 'https://gateway.example.net,https://gw2.example.net/$(reboot)' },
      { gatewayUrl: 'https://gateway.example.net,' },
      { enrollUrl: 'https://enroll.example.net, https://gw2.example.net' },
      { enrollUrl: 'https://enroll.example.net/`id`' },
      { releaseUrl: "https://releases.example.net/a'b" },
      { releaseUrl: 'https://releases.example.net/a"b' },
      { releaseUrl: 'https://releases.example.net/a\nFLEETKIT_RELEASE_ENV\nreboot' },
      { releaseUrl: 'https://releases.example.net/a;reboot' },
      { releaseUrl: 'https://releases.example.net/a b' },
      { releaseVersion: '0.1.0; reboot' },
      { releaseVersion: '0.1.0 ' },
      { releaseVersion: '0.1.0-$(id)' },
      { releasePublicKey: 'n+InCdneGwlZ6eONSz31edBrrsLPqhbIZG5PXhE+Us8=\nFLEETKIT_RELEASE_KEY' },
      { enrollmentSecret: `${SECRET.slice(0, 60)}\nid\n` },
      { caBundlePem: `${CA}FLEETKIT_GATEWAY_CA\nreboot\n` },
      { nodeId: 'build-1\nreboot' },
      { dataMount: '/srv/$(id)' },
    ]
    for (const attempt of attempts)
      assert.equal(
        code(() => renderAgentSeedScript(agentInput(attempt))),
        'SEED_VALUE_INVALID',
        JSON.stringify(attempt),
      )
  })

  it("pins a private mirror's CA for the verifier only when release.caFile gives one", () => {
    assert.match(renderAgentSeedScript(agentInput()), /<<'FLEETKIT_RELEASE_CA'\n\nFLEETKIT_RELEASE_CA\n/)
    const seed = renderAgentSeedScript(agentInput({ releaseCaPem: CA }))
    assert.ok(seed.includes(`<<'FLEETKIT_RELEASE_CA'\n${CA.trimEnd()}\nFLEETKIT_RELEASE_CA\n`))
    assert.match(seed, /verify_args\+=\(--ca-file "\$ROOT\/etc\/fleetkit\/release-ca.pem"\)/)
    assert.equal(
      code(() =>
        renderAgentSeedScript(
          agentInput({
            releaseCaPem: '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n',
          }),
        ),
      ),
      'SEED_VALUE_INVALID',
    )
  })

  it('passes shellcheck', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetkit-seed-'))
    try {
      writeFileSync(join(dir, 'seed.sh'), renderAgentSeedScript(agentInput()))
      await runProcessOk('shellcheck', ['-s', 'bash', join(dir, 'seed.sh')])
      await runProcessOk('shellcheck', ['-s', 'bash', packagePath('cloud-init', 'agent-seed.sh.tmpl')])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('render: worker seed', () => {
  const operatorKey = OPERATOR_KEY
  const cases = workerSeedCases()

  it("holds the account, the operators' keys, the sudo rule and only the pinned host key", () => {
    const hostKey = cases.plain.hostKey
    const text = renderWorkerSeed(cases.plain)
    assert.ok(text.startsWith('#cloud-config\n'))
    const doc = parse(text) as Record<string, unknown>
    assert.deepEqual(doc.users, [
      {
        name: 'ops',
        gecos: 'fleetkit operator account',
        shell: '/bin/bash',
        lock_passwd: true,
        sudo: 'ALL=(ALL) NOPASSWD:ALL',
        ssh_authorized_keys: [operatorKey],
      },
    ])
    assert.deepEqual(doc.ssh_keys, { ed25519_private: hostKey.privateKey, ed25519_public: hostKey.publicKey })
    assert.equal(doc.ssh_deletekeys, true)
    assert.equal(doc.package_update, true)
    assert.equal(doc.tailscale, undefined)
    // It installs nothing: the first sync's roles install the agent and hand it its enrollment.
    assert.equal(doc.packages, undefined)
    assert.deepEqual(doc.bootcmd, [firstBootGuardScript({ ...GUARD, sshPort: undefined })])
  })

  it('configures sshd on the declared ssh.port, and leaves port 22 alone', () => {
    const doc = parse(renderWorkerSeed(cases.sshPort)) as {
      write_files: { path: string; content: string; permissions: string }[]
      runcmd: string[][]
    }
    assert.deepEqual(
      doc.write_files.map((f) => [f.path, f.permissions]),
      [['/etc/ssh/sshd_config.d/10-fleetkit-port.conf', '0644']],
    )
    assert.match(doc.write_files[0]!.content, /^Port 2222$/m)
    assert.match(doc.runcmd[0]!.join(' '), /sshd -t && systemctl daemon-reload/)
    for (const port of [undefined, 22]) {
      const plain = parse(renderWorkerSeed({ ...cases.plain, sshPort: port })) as Record<string, unknown>
      assert.equal(plain.write_files, undefined)
      assert.equal(plain.runcmd, undefined)
    }
    assert.equal(
      code(() => renderWorkerSeed({ ...cases.plain, sshPort: 70000 })),
      'SEED_VALUE_INVALID',
    )
  })

  it('wraps it for autoinstall', () => {
    const doc = parse(renderWorkerSeed(cases.autoinstall)) as { autoinstall: Record<string, unknown> }
    assert.equal(doc.autoinstall.version, 1)
    assert.equal((doc.autoinstall['user-data'] as { hostname: string }).hostname, 'dev-1')
  })

  it('takes the password-checked sudo rule too', () => {
    assert.equal(
      (parse(renderWorkerSeed(cases.passwordSudo)) as { users: { sudo: string }[] }).users[0]!.sudo,
      'ALL=(ALL:ALL) ALL',
    )
  })

  it('refuses root, a bad key or a widened sudo rule', () => {
    const hostKey = generateSshHostKey('dev-1', seededRng('t'))
    assert.equal(
      code(() =>
        renderWorkerSeed({ nodeId: 'dev-1', user: 'root', operatorKeys: [operatorKey], hostKey, guard: GUARD }),
      ),
      'SEED_VALUE_INVALID',
    )
    assert.equal(
      code(() => renderWorkerSeed({ nodeId: 'dev-1', user: '', operatorKeys: [operatorKey], hostKey, guard: GUARD })),
      'SEED_VALUE_INVALID',
    )
    assert.equal(
      code(() =>
        renderWorkerSeed({
          nodeId: 'dev-1',
          user: 'ops',
          operatorKeys: [`${operatorKey}\nruncmd: [reboot]`],
          hostKey,
          guard: GUARD,
        }),
      ),
      'SEED_VALUE_INVALID',
    )
    assert.equal(
      code(() =>
        renderWorkerSeed({
          nodeId: 'dev-1',
          user: 'ops',
          operatorKeys: [operatorKey],
          hostKey,
          guard: GUARD,
          sudoRule: 'ALL=(ALL) NOPASSWD:ALL\nDefaults !requiretty',
        }),
      ),
      'SEED_VALUE_INVALID',
    )
  })
})

describe('render: SSH host key', () => {
  it('writes an OpenSSH private key whose public half ssh-keygen derives identically', async () => {
    const key = generateSshHostKey('node-a', seededRng('host-key'))
    const dir = mkdtempSync(join(tmpdir(), 'fleetkit-hostkey-'))
    try {
      writeFileSync(join(dir, 'key'), key.privateKey, { mode: 0o600 })
      assert.equal((await runProcessOk('ssh-keygen', ['-y', '-f', join(dir, 'key')])).stdout.trim(), key.publicKey)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('is deterministic for an injected rng and differs per rng', () => {
    assert.deepEqual(generateSshHostKey('a', seededRng('x')), generateSshHostKey('a', seededRng('x')))
    assert.notEqual(
      generateSshHostKey('a', seededRng('x')).publicKey,
      generateSshHostKey('a', seededRng('y')).publicKey,
    )
  })
})

describe('render: enrollment secret, TTL and size budget', () => {
  it('draws 256 bits and keeps the SHA-256 of the hex text', async () => {
    const s = newEnrollmentSecret(seededRng('s'))
    assert.match(s.secret, /^[0-9a-f]{64}$/)
    assert.equal(
      s.sha256.toString('hex'),
      (await runProcessOk('sha256sum', [], { input: s.secret })).stdout.split(' ')[0],
    )
  })

  it('parses TTLs from 1m to 24h and refuses the rest with SEED_TTL_INVALID', () => {
    assert.equal(parseSecretTtl(undefined), 15 * 60_000)
    assert.equal(parseSecretTtl('15m'), 15 * 60_000)
    assert.equal(parseSecretTtl('1h30m'), 90 * 60_000)
    assert.equal(parseSecretTtl('24h'), 24 * 3_600_000)
    assert.equal(parseSecretTtl('900s'), 900_000)
    for (const bad of ['', '0m', '59s', '25h', '24h1s', '1d', '15', '-5m', '15m; id', 'PT15M'])
      assert.equal(
        code(() => parseSecretTtl(bad)),
        'SEED_TTL_INVALID',
        bad,
      )
  })

  it('keeps a small seed plain, gzips a large one and refuses one still too large', () => {
    const small = fitSeedBudget('#!/bin/bash\n')
    assert.equal(small.gzipped, false)
    const large = 'echo fleetkit\n'.repeat(4000)
    const fitted = fitSeedBudget(large)
    assert.equal(fitted.gzipped, true)
    assert.ok(fitted.bytes.length <= SEED_BUDGET_BYTES)
    assert.equal(gunzipSync(fitted.bytes).toString(), large)
    const random = seededRng('noise')(40_000).toString('base64')
    assert.throws(
      () => fitSeedBudget(random),
      (error: unknown) => {
        assert.ok(error instanceof FleetkitError)
        assert.equal(error.code, 'SEED_TOO_LARGE')
        assert.equal(error.data?.expected, SEED_BUDGET_BYTES)
        assert.ok((error.data?.actual as number) > SEED_BUDGET_BYTES)
        return true
      },
    )
  })
})
