// A stock Debian 13 (trixie) container host booted from fleetkit's own worker seed, before any
// sync: the declared account with the operator's key, the pinned host key, br_netfilter's files and
// the first-boot inet fleetkit table (SSH from the operator only; a stranger's SYN is dropped);
// preflight accepts Debian 13 with no release switch; the firewall role then replaces the seed's
// table under its dead-man switch, and a second converge changes nothing. One host for all of it.
import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'

import { generateSshHostKey } from '../../../src/render/ssh-host-key.js'
import { renderWorkerSeed } from '../../../src/render/worker-seed.js'
import { OPERATOR_ADDRESS, probeTcp } from '../../hosts/index.js'
import { sshOptions } from '../../hosts/ssh.js'
import { runProcess } from '../../support/process.js'
import { TEST_HARNESS_VARS, checkConvergeIdempotent, roleHostFixture, runRoles, tail } from './role-runs.js'

const NAME = 'seeded'
const OPERATOR_CIDR = `${OPERATOR_ADDRESS}/32`
// The seed pins this host key (the helper serves the same one) and gives `ops` this client key.
const hostKey = generateSshHostKey(NAME)
const opsKey = generateSshHostKey('ops')
const userData = renderWorkerSeed({
  nodeId: NAME,
  user: 'ops',
  operatorKeys: [opsKey.publicKey],
  hostKey,
  guard: { operatorCidrs: [OPERATOR_CIDR] },
})

describe('seeds: a Debian 13 host booted from the worker seed is guarded before its first sync', function () {
  const fixture = roleHostFixture(NAME, ['br_netfilter', 'firewall'], {
    release: 'trixie',
    hostKey,
    seed: { userData },
  })
  const vars = { ...TEST_HARNESS_VARS, fleetkit_operator_cidrs: [OPERATOR_CIDR] }

  async function asOps(command: string) {
    const keyFile = join(fixture.dir, 'ops_ed25519')
    await writeFile(keyFile, opsKey.privateKey, { mode: 0o600 })
    const knownHosts = join(fixture.dir, 'ops_known_hosts')
    await writeFile(knownHosts, `${fixture.host.knownHostsLine}\n`)
    const options = sshOptions({ operator: { privateKeyFile: keyFile } }, knownHosts)
    return runProcess('ssh', [...options, `ops@${fixture.host.address}`, command], { timeoutMs: 30_000 })
  }

  it('runs Debian 13; the declared account logs in with the operator key against the pinned host key; preflight accepts it', async () => {
    assert.match((await fixture.host.sshOk('. /etc/os-release; echo "$ID $VERSION_ID"')).stdout, /^debian 13$/m)
    const login = await asOps('id -un && sudo -n true && echo sudo-ok')
    assert.equal(login.code, 0, login.stderr)
    assert.deepEqual(login.stdout.trim().split('\n'), ['ops', 'sudo-ok'])
    const served = (await fixture.host.sshOk('cat /etc/ssh/ssh_host_ed25519_key.pub')).stdout.split(' ').slice(0, 2)
    assert.deepEqual(served, hostKey.publicKey.split(' ').slice(0, 2))
    const preflight = await runRoles({
      inventory: fixture.inventory,
      playbook: fixture.playbook,
      tags: ['preflight'],
      extraVars: vars,
    })
    assert.equal(preflight.code, 0, tail(preflight))
    assert.match(preflight.stdout, /"version": "13(\.\d+)?"/)
  })

  it('has br_netfilter and the inet fleetkit table from first boot: SSH from the operator, a stranger dropped', async () => {
    const status = await fixture.host.ssh('cloud-init status --long')
    assert.match(status.stdout, /status: done/, status.stdout)
    const table = (await fixture.host.sshOk('nft list table inet fleetkit')).stdout
    assert.match(table, /ip saddr @operators_v4 tcp dport 22 accept comment "SSH from the operator CIDRs"/)
    assert.match(table, new RegExp(`elements = \\{ ${OPERATOR_ADDRESS.replaceAll('.', '\\.')} \\}`))
    assert.match(table, /policy drop/)
    assert.doesNotMatch(table, /docker0/, 'the seed has no firewall-role rules yet')
    const files = await fixture.host.sshOk(
      'cat /etc/modules-load.d/fleetkit.conf /etc/sysctl.d/90-fleetkit.conf; cat /proc/sys/net/bridge/bridge-nf-call-iptables',
    )
    assert.match(files.stdout, /^br_netfilter$/m)
    assert.match(files.stdout, /^net\.bridge\.bridge-nf-call-ip6tables=1$/m)
    assert.equal(files.stdout.trim().split('\n').at(-1), '1')
    assert.equal(await probeTcp(fixture.host.address, 22, 'operator'), 'open')
    assert.equal(await probeTcp(fixture.host.address, 22, 'stranger'), 'timeout')
  })

  it("the firewall role replaces the seed's table under its dead-man switch; a second converge changes nothing", async () => {
    await checkConvergeIdempotent({
      inventory: fixture.inventory,
      playbook: fixture.playbook,
      hosts: [NAME],
      extraVars: vars,
    })
    const table = (await fixture.host.sshOk('nft list table inet fleetkit')).stdout
    assert.match(table, /iifname "docker0" accept/, 'the role has replaced the table')
    assert.equal((await fixture.host.sshOk('nft list tables | grep -c "inet fleetkit"')).stdout.trim(), '1')
    // The role keeps its rules for boot where the seed kept its own: the guard leaves them alone from now on.
    const boot = (await fixture.host.sshOk('cat /etc/fleetkit/firewall.nft; systemctl is-enabled fleetkit-firewall'))
      .stdout
    assert.doesNotMatch(boot, /Written by the fleetkit seed/)
    assert.match(boot, /^enabled$/m)
    assert.equal(await probeTcp(fixture.host.address, 22, 'stranger'), 'timeout')
    assert.equal(await probeTcp(fixture.host.address, 22, 'operator'), 'open')
  })
})
