// sshd on a real container host, logged in as the operator's non-root account (`ops`, sudo) as
// `fleetkit sync` does: keys only, no root login, one port, the worker seed's port drop-in taken
// over, an extra listener and an overriding drop-in found by check mode (drift) and repaired; a
// run that logs in as root is refused before it could lock itself out. What sshd offers is read
// from ssh's own refusal ("Permission denied (publickey,password)"), so no password is typed.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'

import { packagePath } from '../../../src/package-root.js'
import { ANSIBLE_DIR, type ContainerHost, type Inventory, writeInventory } from '../../hosts/index.js'
import { hostKnownHostsFile, sshOptions } from '../../hosts/ssh.js'
import { overlayEnv, runProcess, runProcessOk } from '../../support/process.js'
import { TEST_HARNESS_VARS, checkConvergeIdempotent, roleHostFixture, runRoles, tail } from './role-runs.js'

/** The role's own policy, not the harness's root-with-a-key. */
const POLICY = { ...TEST_HARNESS_VARS, sshd_permit_root_login: 'no' }
const DROP_INS = '/etc/ssh/sshd_config.d'

/**
 * Runs COMMAND on HOST as USER with the operator's key and the pinned host key; never throws. A
 * refused connection is tried again for up to 10 s: a test's own `systemctl reload ssh` returns
 * before sshd has re-executed and listens again (the role's helper waits for that itself).
 */
async function sshAs(host: ContainerHost, user: string, command: string, extra: string[] = []) {
  const args = [...sshOptions(host, hostKnownHostsFile(host)), ...extra, '-p', String(host.port)]
  for (let attempt = 1; ; attempt++) {
    const run = await runProcess('ssh', [...args, `${user}@${host.address}`, '--', command], { timeoutMs: 60_000 })
    if (run.code !== 255 || !/Connection refused/.test(run.stderr) || attempt === 20) return run
    await delay(500)
  }
}

/** What the server offers USER when the client has no key to give: ssh's "Permission denied (...)". */
async function offeredMethods(host: ContainerHost, user: string): Promise<string> {
  const run = await sshAs(host, user, 'true', ['-o', 'PubkeyAuthentication=no'])
  assert.notEqual(run.code, 0, `${user} logged in without a key`)
  return /Permission denied \(([^)]*)\)/.exec(run.stderr)?.[1] ?? run.stderr
}

/** What the sync fast path digests of sshd (fleetkit_fingerprint's sshd:effective), read over INVENTORY. */
async function sshdFingerprint(inventory: Inventory, host: string): Promise<string> {
  const { stdout } = await runProcessOk(
    'ansible',
    [host, '-b', '-i', inventory.inventoryFile, '-M', packagePath('ansible', 'playbooks', 'library')].concat([
      '-m',
      'fleetkit_fingerprint',
      '-a',
      JSON.stringify({ resources: [{ kind: 'sshd', name: 'effective' }] }),
    ]),
    {
      cwd: ANSIBLE_DIR,
      env: overlayEnv({
        ANSIBLE_CONFIG: join(ANSIBLE_DIR, 'ansible.cfg'),
        ANSIBLE_LOAD_CALLBACK_PLUGINS: '1',
        ANSIBLE_STDOUT_CALLBACK: 'json',
        ANSIBLE_NOCOLOR: '1',
        ANSIBLE_SSH_CONTROL_PATH_DIR: join(inventory.dir, '.cp'),
      }),
      timeoutMs: 120_000,
    },
  )
  const result = JSON.parse(stdout) as {
    plays: { tasks: { hosts: Record<string, { items: Record<string, string> }> }[] }[]
  }
  return result.plays[0]!.tasks[0]!.hosts[host]!.items['sshd:effective']!
}

describe('roles: sshd on a container host', function () {
  const fixture = roleHostFixture('sshd', ['sshd'])
  let inventory: Inventory
  const asOps = async (command: string) => {
    const run = await sshAs(fixture.host, 'ops', command)
    assert.equal(run.code, 0, `ops: ${command}: ${run.stderr}`)
    return run.stdout
  }
  const effective = async () => asOps('sudo /usr/sbin/sshd -T')

  it('refuses to turn off root login while it logs in as root, and changes nothing', async () => {
    const before = (await fixture.host.sshOk(`ls -l ${DROP_INS}; /usr/sbin/sshd -T`)).stdout
    const run = await runRoles({ inventory: fixture.inventory, playbook: fixture.playbook, extraVars: POLICY })
    assert.notEqual(run.code, 0, tail(run))
    assert.match(run.stdout, /SSHD_ROOT_LOGIN_IN_USE: this run logs in as root/)
    assert.equal((await fixture.host.sshOk(`ls -l ${DROP_INS}; /usr/sbin/sshd -T`)).stdout, before)
  })

  it('as the operator: check changes nothing; converge leaves keys only, no root login, one port; a second run changes nothing', async () => {
    // The account a worker seed makes (with a password, to prove it is never asked for), the seed's
    // port drop-in, and someone's drop-in (read after ours) that opens a second port and passwords.
    await fixture.host.sshOk(
      [
        'useradd -m -s /bin/bash ops',
        'echo ops:not-a-secret | chpasswd',
        'echo root:not-a-secret | chpasswd',
        'install -d -m 700 -o ops -g ops /home/ops/.ssh',
        'install -m 600 -o ops -g ops /root/.ssh/authorized_keys /home/ops/.ssh/authorized_keys',
        "echo 'ops ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/ops && chmod 440 /etc/sudoers.d/ops",
        `printf 'Port 22\\n' > ${DROP_INS}/10-fleetkit-port.conf`,
        `printf 'Port 2200\\nPasswordAuthentication yes\\n' > ${DROP_INS}/20-local.conf`,
        'systemctl reload ssh',
      ].join(' && '),
    )
    assert.match(await offeredMethods(fixture.host, 'ops'), /password/)
    inventory = await writeInventory([fixture.host], join(fixture.dir, 'ops'), { sshd: { ansible_user: 'ops' } })
    const before = await effective()
    const { check } = await checkConvergeIdempotent({
      inventory,
      playbook: fixture.playbook,
      hosts: [fixture.host.name],
      extraVars: POLICY,
      verifyUntouched: async () => assert.equal(await effective(), before, 'check mode changed sshd'),
    })
    // Check mode shows the drop-in's diff and each setting with both values (fleetkit_differences).
    assert.match(check.stdout, /TASK \[sshd : Show how the drop-in would change\][^]*?changed: /)
    // The drop-in is new on this host: Ansible's diff names no `before` file, only the template, and shows its lines.
    assert.match(
      check.stdout,
      /--- before(?:: \/etc\/ssh\/sshd_config\.d\/10-fleetkit\.conf)?\n\+\+\+ after: \S*10-fleetkit\.conf\.j2\n[^]*?\+PasswordAuthentication no\n/,
    )
    assert.match(check.stdout, /"current": "(2200, 22|22, 2200)",\s*"setting": "Port",\s*"wanted": "22"/)
    assert.match(
      check.stdout,
      /"current": "present",\s*"setting": "\/etc\/ssh\/sshd_config\.d\/10-fleetkit-port\.conf",\s*"wanted": "absent"/,
    )

    const now = await effective()
    assert.match(now, /^port 22$/m)
    assert.doesNotMatch(now, /^port 2200$/m)
    assert.match(now, /^passwordauthentication no$/m)
    assert.match(now, /^kbdinteractiveauthentication no$/m)
    assert.match(now, /^pubkeyauthentication yes$/m)
    assert.match(now, /^permitrootlogin no$/m)
    // The seed's port is in the role's drop-in now; the other file's lines are commented, not lost.
    assert.equal((await sshAs(fixture.host, 'ops', `test -e ${DROP_INS}/10-fleetkit-port.conf`)).code, 1)
    assert.match(await asOps(`cat ${DROP_INS}/20-local.conf`), /^# overridden by fleetkit's sshd role .*: Port 2200$/m)
    // The live sshd (reloaded), seen from outside: keys only, root refused even with its key.
    assert.equal(await offeredMethods(fixture.host, 'ops'), 'publickey')
    assert.equal((await asOps('id -un')).trim(), 'ops')
    const root = await sshAs(fixture.host, 'root', 'true')
    assert.notEqual(root.code, 0, 'root logged in with its key')
    // The dead-man switch was confirmed: nothing is left to roll the change back.
    assert.match(await asOps('sudo ls /run/fleetkit/deadman/'), /sshd\.disarmed/)
  })

  it("an earlier drop-in that turns passwords back on is drift (and moves the fast path's fingerprint); the next run comments it out", async () => {
    const converged = await sshdFingerprint(inventory, fixture.host.name)
    assert.match(converged, /^[0-9a-f]{64}$/)
    await asOps(
      `printf 'PasswordAuthentication yes\\n' | sudo tee ${DROP_INS}/05-override.conf >/dev/null && sudo systemctl reload ssh`,
    )
    assert.match(await offeredMethods(fixture.host, 'ops'), /password/)
    assert.notEqual(await sshdFingerprint(inventory, fixture.host.name), converged, 'the fast path would skip the node')
    const drift = await runRoles({ inventory, playbook: fixture.playbook, extraVars: POLICY, check: true, diff: true })
    assert.equal(drift.code, 0, tail(drift))
    assert.equal(drift.recap[fixture.host.name]?.changed, 1, tail(drift))
    assert.match(drift.stdout, /"current": "yes",\s*"setting": "PasswordAuthentication",\s*"wanted": "no"/)

    const repair = await runRoles({ inventory, playbook: fixture.playbook, extraVars: POLICY })
    assert.equal(repair.code, 0, tail(repair))
    assert.match(
      await asOps(`cat ${DROP_INS}/05-override.conf`),
      /^# overridden by fleetkit's sshd role \(10-fleetkit\.conf\): PasswordAuthentication yes$/m,
    )
    assert.match(await effective(), /^passwordauthentication no$/m)
    assert.equal(await offeredMethods(fixture.host, 'ops'), 'publickey')
  })

  it("root's staging directory: what another account owns there is removed, and the dead-man restore refuses a drop-in root does not own", async () => {
    // What an older agent role did (it gave /var/lib/fleetkit/sshd to fleetkit-agent), and a drop-in
    // that account then put where the dead-man restore copies from. `nobody` stands in for the agent,
    // whose home /var/lib/fleetkit is.
    const state = '/var/lib/fleetkit/sshd'
    await asOps(
      [
        `sudo chown -R nobody:nogroup /var/lib/fleetkit`,
        `sudo runuser -u nobody -- sh -c 'echo PasswordAuthentication yes > ${state}/previous.d/00-agent.conf'`,
      ].join(' && '),
    )
    const live = await asOps(`sudo ls -l ${DROP_INS}`)
    const repair = await runRoles({ inventory, playbook: fixture.playbook, extraVars: POLICY })
    assert.equal(repair.code, 0, tail(repair))
    // Nothing else to change: the directory is gone until the next change stages one, as root's.
    assert.equal((await sshAs(fixture.host, 'ops', `sudo test -e ${state}`)).code, 1)
    assert.match(repair.stdout, /TASK \[sshd : Remove sshd state that is not root's\][^]*?changed: /)
    assert.equal(await asOps(`sudo ls -l ${DROP_INS}`), live)
    const again = await runRoles({ inventory, playbook: fixture.playbook, extraVars: POLICY })
    assert.equal(again.recap[fixture.host.name]?.changed, 0, tail(again))

    // The next change stages in a directory of root's, 0700, which the other account cannot write in.
    await asOps(`printf 'PasswordAuthentication yes\\n' | sudo tee ${DROP_INS}/05-drift.conf >/dev/null`)
    const staged = await runRoles({ inventory, playbook: fixture.playbook, extraVars: POLICY })
    assert.equal(staged.code, 0, tail(staged))
    assert.equal((await asOps(`sudo find ${state} ! -user root -o ! -group root`)).trim(), '')
    assert.equal((await asOps(`sudo stat -c %U:%G:%a ${state}`)).trim(), 'root:root:700')
    const planted = await sshAs(fixture.host, 'ops', `sudo runuser -u nobody -- touch ${state}/previous.d/x.conf`)
    assert.notEqual(planted.code, 0, "nobody wrote in root's staging directory")
    // Should a file of another owner get there all the same, the restore refuses to copy it into /etc/ssh.
    await asOps(`sudo install -m 0644 -o nobody /dev/null ${state}/previous.d/00-agent.conf`)
    const before = await asOps(`sudo ls -l ${DROP_INS}`)
    const restore = await sshAs(fixture.host, 'ops', 'sudo /usr/local/lib/fleetkit/fleetkit-sshd swap previous')
    assert.equal(restore.code, 1, restore.stderr)
    assert.match(restore.stderr, /previous\.d\/00-agent\.conf is owned by nobody, not root/)
    assert.equal(await asOps(`sudo ls -l ${DROP_INS}`), before)
    await asOps(`sudo rm -f ${state}/previous.d/00-agent.conf`)
  })
})
