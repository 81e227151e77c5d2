// The firewall role on real container hosts: check mode on a fresh host, converge, idempotence,
// probes from the operator address and a stranger's namespace, and the dead-man switch rolling back
// a ruleset that would lock the operator out (the host does it, on its own timer).
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { TEST_HARNESS_VARS, runRoles } from './role-runs.js'
import { checkFirewall } from '../../../src/agent/host-checks.js'
import { loadHostPolicy } from '../../../src/definition/host-policy.js'
import type { CommandRunner } from '../../../src/agent/command-runner.js'
import type { HostFile } from '../../../src/agent/host.js'
import {
  type ContainerHost,
  type Inventory,
  type PlaybookResult,
  type TestHost,
  OPERATOR_ADDRESS,
  assertHostsAvailable,
  probeTcp,
  startContainerHosts,
  startListener,
  writeInventory,
} from '../../hosts/index.js'

// The lock-out test's deadline; converge runs keep the default (60 s), as a loaded machine needs it.
const CONFIRM_TIMEOUT = 30
const PUBLIC_PORT = 8443
const CLOSED_PORT = 9000

function quote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`
}

/** The agent's command runner, but on the test host over ssh (as USER): host:firewall checks the real host. */
function sshRunner(host: TestHost, user = 'root'): CommandRunner {
  return async (command, args) => {
    const line = [command, ...args].map(quote).join(' ')
    const result = await host.ssh(user === 'root' ? line : `runuser -u ${user} -- ${line}`)
    return { exitCode: result.code, stdout: result.stdout, stderr: result.stderr }
  }
}

/** The agent's file reads, but of the test host's files over ssh (as USER): the modes must let the agent read. */
function sshFiles(host: TestHost, user = 'root'): (path: string) => Promise<HostFile> {
  return async (path) => {
    const line = `stat -c %Y ${quote(path)} && cat ${quote(path)}`
    const result = await host.ssh(user === 'root' ? line : `runuser -u ${user} -- sh -c ${quote(line)}`)
    if (result.code !== 0) return { error: /permission denied/i.test(result.stderr) ? 'EACCES' : 'ENOENT' }
    const newline = result.stdout.indexOf('\n')
    return {
      content: result.stdout.slice(newline + 1),
      modified: new Date(Number(result.stdout.slice(0, newline)) * 1000),
    }
  }
}

function failedTaskMessages(result: PlaybookResult): string {
  return result.stdout
    .split('\n')
    .filter((line) => /^fatal:|"msg":/.test(line))
    .join('\n')
}

function describeRun(result: PlaybookResult): string {
  return `ansible-playbook exited ${result.code}\n${result.stdout.slice(-4000)}\n${result.stderr.slice(-2000)}`
}

describe('firewall role on container hosts', function () {
  this.timeout(10 * 60_000)

  let dir: string
  let plain: ContainerHost
  let ingress: ContainerHost
  let inventory: Inventory

  // firewall.yml runs preflight first, with the host policy the rendered inventory carries.
  const hostVars =
    (operatorCidrs: string[], extra: Record<string, unknown> = {}) =>
    (host: TestHost) => ({
      fleetkit_host_policy: loadHostPolicy(),
      fleetkit_operator_cidrs: operatorCidrs,
      fleetkit_ingress: host.name === ingress.name,
      fleetkit_exposure:
        host.name === plain.name ? { publicSsh: false, publicPorts: [{ protocol: 'tcp', port: PUBLIC_PORT }] } : {},
      ...extra,
    })

  const converge = (
    extra: {
      check?: boolean
      limit?: string
      inventory?: Inventory
      vars?: Record<string, unknown>
      tags?: string[]
    } = {},
  ) =>
    runRoles({
      inventory: extra.inventory ?? inventory,
      playbook: 'firewall.yml',
      check: extra.check,
      diff: extra.check,
      limit: extra.limit,
      tags: extra.tags,
      extraVars: { ...TEST_HARNESS_VARS, ...extra.vars },
    })

  before(async function () {
    await assertHostsAvailable('container')
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-firewall-'))
    const started = await startContainerHosts(2, (i) => ({
      name: `fw${i === 0 ? 'p' : 'i'}${process.pid.toString(36)}`,
    }))
    plain = started[0]!
    ingress = started[1]!
    inventory = await writeInventory([plain, ingress], join(dir, 'inventory'), hostVars([`${OPERATOR_ADDRESS}/32`]))
    // Something that answers on every port the tests probe, and a table of another owner (as Docker's).
    for (const host of [plain, ingress]) {
      for (const port of [80, 443, PUBLIC_PORT, CLOSED_PORT]) await startListener(host, port)
      await host.sshOk(
        `nft add table ip foreign && nft add chain ip foreign keep '{ type filter hook forward priority 10; }'`,
      )
    }
  })

  after(async function () {
    await Promise.allSettled([plain?.stop(), ingress?.stop()])
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('check mode on a fresh host neither fails nor changes anything', async function () {
    const before = await plain.sshOk(
      'nft list ruleset; ls -a /etc/fleetkit /var/lib/fleetkit /etc/systemd/system 2>&1; true',
    )
    const result = await converge({ check: true })
    assert.equal(result.code, 0, describeRun(result))
    for (const host of [plain, ingress]) assert.equal(result.recap[host.name]?.failed, 0, describeRun(result))
    const after = await plain.sshOk(
      'nft list ruleset; ls -a /etc/fleetkit /var/lib/fleetkit /etc/systemd/system 2>&1; true',
    )
    assert.equal(after.stdout, before.stdout)
    assert.equal((await plain.ssh('nft list table inet fleetkit')).code, 1, 'check mode loaded the table')
    // Nothing blocks yet: the closed port answers before the converge.
    assert.equal(await probeTcp(plain.address, CLOSED_PORT, 'stranger'), 'open')
  })

  /** The boot unit's own account of a failed start, from each host's journal. */
  const unitJournals = async () => {
    const lines = await Promise.all(
      [plain, ingress].map(async (host) => {
        const journal = await host.ssh('journalctl -u fleetkit-firewall.service --no-pager -n 30 -o short-monotonic')
        return `-- ${host.name} --\n${journal.stdout}${journal.stderr}`
      }),
    )
    return lines.join('\n')
  }

  it('converges, loads the table at boot, and a second run changes nothing', async function () {
    const first = await converge()
    assert.equal(first.code, 0, `${describeRun(first)}\n${first.code === 0 ? '' : await unitJournals()}`)
    assert.ok((first.recap[plain.name]?.changed ?? 0) > 0, describeRun(first))
    for (const host of [plain, ingress]) {
      await host.sshOk('nft list table inet fleetkit')
      assert.equal((await host.ssh('systemctl is-enabled fleetkit-firewall.service')).stdout.trim(), 'enabled')
      assert.equal((await host.ssh('systemctl is-active fleetkit-firewall.service')).stdout.trim(), 'active')
      assert.equal((await host.ssh('systemctl is-enabled fleetkit-firewall-snapshot.timer')).stdout.trim(), 'enabled')
      assert.equal((await host.ssh('systemctl is-active fleetkit-firewall-snapshot.timer')).stdout.trim(), 'active')
      // Docker's and Tailscale's tables are theirs: ours replaced only itself.
      await host.sshOk('nft list table ip foreign')
      // The dead-man switch was disarmed: no timer is left to undo the confirmed rules.
      assert.notEqual((await host.ssh('systemctl is-active fleetkit-deadman-firewall.timer')).stdout.trim(), 'active')
      assert.equal((await host.ssh('test -e /run/fleetkit/deadman/firewall.fired')).code, 1)
    }
    const second = await converge()
    assert.equal(second.code, 0, describeRun(second))
    for (const host of [plain, ingress]) assert.equal(second.recap[host.name]?.changed, 0, describeRun(second))
  })

  it('admits SSH from the operator and drops it from a stranger', async function () {
    assert.equal(await probeTcp(plain.address, 22, 'operator'), 'open')
    assert.equal(await probeTcp(plain.address, 22, 'stranger'), 'timeout')
    assert.equal(await probeTcp(ingress.address, 22, 'stranger'), 'timeout')
  })

  it('answers 80/443 only on the ingress host, and a declared public port', async function () {
    for (const port of [80, 443]) {
      assert.equal(await probeTcp(plain.address, port, 'operator'), 'timeout', `port ${port} on the non-ingress host`)
      assert.equal(await probeTcp(plain.address, port, 'stranger'), 'timeout', `port ${port} on the non-ingress host`)
      assert.equal(await probeTcp(ingress.address, port, 'stranger'), 'open', `port ${port} on the ingress host`)
    }
    assert.equal(await probeTcp(plain.address, PUBLIC_PORT, 'stranger'), 'open')
    assert.equal(
      await probeTcp(ingress.address, PUBLIC_PORT, 'stranger'),
      'timeout',
      'publicPorts of one host opened another',
    )
    assert.equal(await probeTcp(plain.address, CLOSED_PORT, 'stranger'), 'timeout')
    assert.equal(await probeTcp(plain.address, CLOSED_PORT, 'operator'), 'timeout')
  })

  it('host:firewall passes as root and as the unprivileged agent user, and fails on a rule added by hand', async function () {
    const check = (user: string) =>
      checkFirewall({
        host: { root: '/', run: sshRunner(plain, user), readFile: sshFiles(plain, user) },
        firewallUnit: 'fleetkit-firewall.service',
        now: new Date(),
      })
    const both = async () => ({ root: await check('root'), agent: await check('nobody') })

    // The timer ran the snapshot by itself (at once when the role started it, long after boot).
    const triggered = await plain.sshOk('systemctl show -P LastTriggerUSecMonotonic fleetkit-firewall-snapshot.timer')
    assert.doesNotMatch(triggered.stdout.trim(), /^(0|n\/a)?$/, 'the snapshot timer never fired')
    let result = await both()
    assert.equal(result.root.status, 'pass', result.root.detail)
    assert.match(result.root.detail, /\(as nft lists it\) is the one last converged/)
    assert.equal(result.agent.status, 'pass', result.agent.detail)
    assert.match(result.agent.detail, /\(snapshot of \d+ s ago\) is the one last converged/)

    // The snapshot now, or why not (the unit's own journal lines name the failed step).
    const snapshotNow = async () => {
      const started = await plain.ssh('systemctl start fleetkit-firewall-snapshot.service')
      if (started.code === 0) return
      const journal = await plain.ssh('journalctl -u fleetkit-firewall-snapshot.service --no-pager -n 20')
      assert.fail(`the snapshot unit failed (${started.code}): ${started.stderr}\n${journal.stdout}`)
    }

    // A rule added by hand: root sees it at once, the agent once the snapshot ran (here: started now).
    await plain.sshOk('nft add rule inet fleetkit input tcp dport 9999 accept')
    try {
      await snapshotNow()
      result = await both()
      for (const [who, r] of Object.entries(result)) {
        assert.deepEqual([r.status, r.code], ['fail', 'FIREWALL_RULES_DRIFTED'], `${who}: ${r.detail}`)
        assert.match(r.detail, /in 1 line; first: \+ tcp dport 9999 accept$/, who)
      }
    } finally {
      // The confirmed boot rules loaded again, whatever failed above: the tests after this one start from them.
      await plain.sshOk('nft -f /etc/fleetkit/firewall.nft')
    }
    await snapshotNow()
    result = await both()
    assert.equal(result.root.status, 'pass', result.root.detail)
    assert.equal(result.agent.status, 'pass', result.agent.detail)
  })

  it('refuses a deadline within two connection timeouts with DEADMAN_TIMEOUT_TOO_SHORT and changes nothing', async function () {
    const table = (await plain.sshOk('nft list table inet fleetkit')).stdout
    const lockout = await writeInventory(
      [plain, ingress],
      join(dir, 'short'),
      hostVars(['10.231.254.0/24'], { firewall_confirm_timeout: CONFIRM_TIMEOUT }),
    )
    const result = await converge({ inventory: lockout, limit: plain.name })
    assert.notEqual(result.code, 0, describeRun(result))
    assert.match(
      failedTaskMessages(result),
      /DEADMAN_TIMEOUT_TOO_SHORT: the firewall switch's deadline \(30 s\) must exceed twice the SSH connection timeout \(20 s/,
      describeRun(result),
    )
    assert.equal((await plain.sshOk('nft list table inet fleetkit')).stdout, table)
    assert.notEqual((await plain.ssh('systemctl is-active fleetkit-deadman-firewall.timer')).stdout.trim(), 'active')
  })

  it('rolls back by itself a ruleset that locks the operator out, reports FIREWALL_CONFIRM_TIMEOUT, and SSH works again', async function () {
    const confirmedTable = (await plain.sshOk('nft list table inet fleetkit')).stdout
    const bootRules = (await plain.sshOk('cat /etc/fleetkit/firewall.nft')).stdout
    // A range that excludes the operator's address: the new rules admit SSH from nobody we are.
    const lockout = await writeInventory(
      [plain, ingress],
      join(dir, 'lockout'),
      hostVars(['10.231.254.0/24'], { firewall_confirm_timeout: CONFIRM_TIMEOUT }),
    )
    // A 10 s connection timeout (ansible.cfg says 20): the short deadline must exceed twice it. Under
    // --tags firewall, as `fleetkit sync --tags firewall` runs it: the rollback's steps run under any tags.
    const result = await converge({
      inventory: lockout,
      limit: plain.name,
      vars: { ansible_timeout: 10, ansible_ssh_timeout: 10 },
      tags: ['firewall'],
    })

    assert.notEqual(result.code, 0, describeRun(result))
    assert.equal(result.recap[plain.name]?.failed, 1, describeRun(result))
    assert.match(
      failedTaskMessages(result),
      /FIREWALL_CONFIRM_TIMEOUT: no new SSH connection got through .* the host restored the previous state by itself/,
      describeRun(result),
    )

    // The host's own timer restored the table: SSH answers the operator and the rules are the confirmed ones.
    assert.equal(await probeTcp(plain.address, 22, 'operator'), 'open')
    assert.equal((await plain.sshOk('nft list table inet fleetkit')).stdout, confirmedTable)
    assert.match((await plain.sshOk('cat /run/fleetkit/deadman/firewall.fired')).stdout, /restore exit status 0/)
    // The boot rules never held the unconfirmed ruleset: a reboot in the window could not lock the host.
    assert.equal((await plain.sshOk('cat /etc/fleetkit/firewall.nft')).stdout, bootRules)
    await plain.sshOk('nft list table ip foreign')

    // The definition fixed: the next run converges again to the confirmed table.
    const again = await converge({ limit: plain.name })
    assert.equal(again.code, 0, describeRun(again))
    assert.equal((await plain.sshOk('nft list table inet fleetkit')).stdout, confirmedTable)
  })

  it("root's state directory: what another account owns there is removed, a planted link is not followed, and it is root's again", async function () {
    // What an older agent role did (it gave /var/lib/fleetkit/firewall to fleetkit-agent), then links
    // that account planted where root writes and reads. `nobody` stands in for the agent, whose home
    // /var/lib/fleetkit is.
    const state = '/var/lib/fleetkit/firewall'
    const target = '/etc/fleetkit-not-the-agents'
    await plain.sshOk(
      [
        `echo root-only > ${target} && chmod 0600 ${target}`,
        `chown -R nobody:nogroup /var/lib/fleetkit`,
        `runuser -u nobody -- ln -s ${target} ${state}/applied.nft.tmp`,
        `runuser -u nobody -- ln -sf ${target} ${state}/applied.nft`,
      ].join(' && '),
    )
    const confirmedTable = (await plain.sshOk('nft list table inet fleetkit')).stdout
    const result = await converge({ limit: plain.name })
    assert.equal(result.code, 0, describeRun(result))
    assert.equal((await plain.sshOk(`stat -c %a:%U ${target}; cat ${target}`)).stdout, '600:root\nroot-only\n')
    assert.match(result.stdout, /TASK \[firewall : Remove firewall state that is not root's\][^]*?changed: /)
    // The record is root's again (the table was applied anew, as nothing recorded it), and the same table.
    assert.equal((await plain.sshOk(`find ${state} ! -user root -o ! -group root -o -type l`)).stdout, '')
    assert.equal((await plain.sshOk(`stat -c %U:%G:%a ${state}`)).stdout.trim(), 'root:root:755')
    assert.equal((await plain.sshOk(`cat ${state}/applied.nft`)).stdout, confirmedTable)
    assert.equal((await plain.sshOk('nft list table inet fleetkit')).stdout, confirmedTable)
    assert.notEqual((await plain.ssh(`runuser -u nobody -- touch ${state}/planted`)).code, 0, 'nobody wrote there')
    const again = await converge({ limit: plain.name })
    assert.equal(again.recap[plain.name]?.changed, 0, describeRun(again))
  })
})
