// The container hosts of test/hosts/, for real: two systemd-nspawn hosts from the golden rootfs,
// ssh with the pinned key only, cloud-init ran the test's seed, writes stay in their own overlay,
// probes from the operator and the stranger see what the host's firewall says, and stop() (or a
// test process that dies) leaves no process, mount, address or folder behind.
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

import {
  type ContainerHost,
  OPERATOR_ADDRESS,
  assertHostsAvailable,
  goldenImage,
  probeTcp,
  runPlaybook,
  startContainerHosts,
  startListener,
  strangerAddress,
  writeInventory,
} from '../../hosts/index.js'
import { alive } from '../../hosts/pids.js'
import { sshRun } from '../../hosts/ssh.js'
import { runProcess, runProcessOk } from '../../support/process.js'

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url))

const seedOf = (name: string) =>
  `#cloud-config\nwrite_files:\n  - path: /etc/fleetkit-test-seed\n    content: "seed of ${name}"\n`

describe('test hosts: containers (systemd-nspawn)', function () {
  this.timeout(600_000)
  let a: ContainerHost
  let b: ContainerHost
  let dir: string

  before(async () => {
    await assertHostsAvailable('container')
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-hosts-test-'))
    ;[a, b] = (await startContainerHosts(2, (i) => ({
      name: `c${i + 1}`,
      seed: { userData: seedOf(`c${i + 1}`) },
      dataDisk: i === 0 ? { sizeMb: 300 } : undefined,
    }))) as [ContainerHost, ContainerHost]
  })

  after(async () => {
    await a?.stop()
    await b?.stop()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('boots systemd as PID 1 in its own container and answers ssh with the pinned key as root', async () => {
    const out = (
      await a.sshOk(
        'cat /proc/1/comm; systemd-detect-virt; hostname; id -un; systemctl is-system-running --wait || true',
      )
    ).stdout.split('\n')
    assert.deepEqual(out.slice(0, 4), ['systemd', 'systemd-nspawn', 'c1', 'root'])
    assert.match(out[4] ?? '', /^(running|degraded)$/)
    assert.notEqual(a.address, b.address)
    assert.equal(
      (await a.sshOk('cat /etc/ssh/ssh_host_ed25519_key.pub')).stdout.split(' ').slice(0, 2).join(' '),
      a.hostPublicKey.split(' ').slice(0, 2).join(' '),
    )
  })

  it('refuses a host whose key is not the pinned one (no trust on first use)', async () => {
    const impostor = { ...a, knownHostsLine: b.knownHostsLine.replace(b.address, a.address), dir }
    const result = await sshRun(impostor, 'true')
    assert.notEqual(result.code, 0)
    assert.match(result.stderr, /host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED/i)
  })

  it('ran the seed the test passed, through cloud-init (boot-finished, no errors)', async () => {
    assert.equal((await a.sshOk('cat /etc/fleetkit-test-seed')).stdout, 'seed of c1')
    assert.equal((await b.sshOk('cat /etc/fleetkit-test-seed')).stdout, 'seed of c2')
    await a.sshOk('test -e /var/lib/cloud/instance/boot-finished')
    const status = await a.ssh('cloud-init status --long')
    assert.match(status.stdout, /status: done/, status.stdout + status.stderr)
  })

  it('keeps a write in its own overlay: not in the other host, not in the golden rootfs', async () => {
    await a.sshOk('echo only-in-c1 > /root/marker && mkdir -p /etc/fleetkit && touch /etc/fleetkit/x')
    assert.equal((await b.ssh('test -e /root/marker')).code, 1)
    const { rootfs } = await goldenImage()
    assert.equal(existsSync(join(rootfs, 'root/marker')), false)
    assert.equal(existsSync(join(rootfs, 'etc/fleetkit')), false)
    assert.equal(readFileSync(join(a.upperDir, 'root/marker'), 'utf8'), 'only-in-c1\n')
  })

  it('formats and mounts XFS on the loop-device data disk inside the host', async () => {
    assert.match(a.dataDisk ?? '', /^\/dev\/loop\d+$/)
    assert.equal(b.dataDisk, undefined)
    await a.sshOk(
      `mkfs.xfs -q ${a.dataDisk} && mkdir -p /srv/data && mount ${a.dataDisk} /srv/data && touch /srv/data/ok`,
    )
    assert.match((await a.sshOk('findmnt -n -o FSTYPE /srv/data')).stdout, /^xfs$/m)
  })

  it("probes from the operator address and from a stranger namespace see the host's own nftables rules", async () => {
    const stranger = await strangerAddress()
    assert.notEqual(stranger, OPERATOR_ADDRESS)
    assert.equal(await probeTcp(a.address, 22, 'operator'), 'open')
    assert.equal(await probeTcp(a.address, 22, 'stranger'), 'open')
    assert.equal(await probeTcp(a.address, 8080, 'operator'), 'refused')
    await startListener(a, 8080)
    assert.equal(await probeTcp(a.address, 8080, 'stranger'), 'open')
    // A host firewall that drops the stranger and admits the operator: probes see the difference.
    await a.sshOk(`nft -f - <<'EOF'
table inet probe_test {
  chain input {
    type filter hook input priority 0; policy accept;
    ip saddr ${stranger} tcp dport { 22, 8080 } drop
    tcp dport 9 reject with tcp reset
  }
}
EOF`)
    assert.equal(await probeTcp(a.address, 22, 'stranger', 1_000), 'timeout')
    assert.equal(await probeTcp(a.address, 8080, 'stranger', 1_000), 'timeout')
    assert.equal(await probeTcp(a.address, 22, 'operator'), 'open')
    assert.equal(await probeTcp(a.address, 9, 'operator'), 'refused')
    // Only host a has the rules: the machine and host b are untouched.
    assert.equal(await probeTcp(b.address, 22, 'stranger'), 'open')
    assert.doesNotMatch((await runProcessOk('nft', ['list', 'tables'])).stdout, /probe_test/)
    await a.sshOk('nft delete table inet probe_test')
  })

  it('runs a playbook over the written inventory with the host keys pinned', async () => {
    const inventory = await writeInventory(
      [a, b],
      join(dir, 'inv'),
      { c1: { probe_value: 'one' } },
      { ingress: ['c2'] },
    )
    assert.equal(readFileSync(inventory.knownHostsFile, 'utf8'), `${a.knownHostsLine}\n${b.knownHostsLine}\n`)
    const playbook = join(dir, 'probe.yml')
    const { writeFile } = await import('node:fs/promises')
    await writeFile(
      playbook,
      `- hosts: all\n  gather_facts: false\n  tasks:\n    - name: Write the host's value\n      ansible.builtin.copy:\n        content: "{{ probe_value | default(group_names | join(',')) }}\\n"\n        dest: /root/probe\n        mode: "0644"\n`,
    )
    const first = await runPlaybook({ inventory, playbook })
    assert.equal(first.code, 0, first.stdout + first.stderr)
    assert.deepEqual([first.recap.c1?.changed, first.recap.c2?.changed], [1, 1])
    const second = await runPlaybook({ inventory, playbook })
    assert.deepEqual([second.recap.c1?.changed, second.recap.c2?.changed, second.recap.c1?.failed], [0, 0, 0])
    assert.equal((await a.sshOk('cat /root/probe')).stdout, 'one\n')
    assert.equal((await b.sshOk('cat /root/probe')).stdout, 'ingress\n')
  })

  it('reboots a container host on the same overlay (what it wrote survives, a new boot id)', async () => {
    const before = (await b.sshOk('cat /proc/sys/kernel/random/boot_id; cat /root/probe')).stdout
    await b.reboot()
    const after = (await b.sshOk('cat /proc/sys/kernel/random/boot_id; cat /root/probe')).stdout.split('\n')
    assert.notEqual(after[0], before.split('\n')[0])
    assert.equal(after[1], 'ingress')
  })

  it('stop() ends the container by PID and removes its mounts, loop device, veth, address and folder', async () => {
    const { nspawnPid, initPid, dir: hostDir, dataDisk, address } = a
    await a.stop()
    assert.equal(alive(nspawnPid), false, 'nspawn ended')
    assert.equal(alive(initPid), false, "the container's PID 1 ended")
    assert.equal(existsSync(hostDir), false)
    assert.doesNotMatch(readFileSync('/proc/self/mountinfo', 'utf8'), new RegExp(hostDir))
    assert.doesNotMatch((await runProcessOk('losetup', ['-a'])).stdout, new RegExp(`^${dataDisk}:`, 'm'))
    assert.equal(existsSync(join('/run/fleetkit-test-hosts/addresses', address)), false)
    assert.equal((await probeTcp(address, 22, 'operator', 1_000)) === 'open', false)
    await a.stop() // idempotent
  })

  it('a test process that dies with hosts running leaves nothing behind (the exit handler kills by PID)', async () => {
    const script = join(dir, 'dies.mts')
    const { writeFile } = await import('node:fs/promises')
    await writeFile(
      script,
      `import { startContainerHosts } from '${join(repoRoot, 'test/hosts/index.ts')}'
const [h] = await startContainerHosts(1, { name: 'doomed', waitForCloudInit: false, dataDisk: true })
console.log(JSON.stringify({ nspawnPid: h.nspawnPid, initPid: h.initPid, dir: h.dir, dataDisk: h.dataDisk }))
throw new Error('the test failed with its host running')
`,
    )
    const result = await runProcess(process.execPath, ['--import', 'tsx', script], {
      cwd: repoRoot,
      timeoutMs: 120_000,
    })
    assert.notEqual(result.code, 0)
    assert.match(result.stderr, /the test failed with its host running/)
    const left = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}') as {
      nspawnPid: number
      initPid: number
      dir: string
      dataDisk: string
    }
    assert.ok(left.initPid > 0, result.stdout + result.stderr)
    assert.equal(alive(left.initPid), false, "the container's PID 1 ended")
    assert.equal(alive(left.nspawnPid), false, 'nspawn ended')
    assert.equal(existsSync(left.dir), false, "the host's folder is removed")
    assert.doesNotMatch((await runProcessOk('losetup', ['-a'])).stdout, new RegExp(`^${left.dataDisk}:`, 'm'))
  })
})
