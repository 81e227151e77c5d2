// Issue 25 on real container hosts: the agent role never takes over an account it did not create.
// A host whose operator logs in as `fleetkit` (the worker seed's own account entry) converges as that
// operator and the operator still has a shell and sudo afterwards; an account or group named
// fleetkit-agent someone else made is refused with AGENT_ACCOUNT_FOREIGN and left as it was; a host
// converged when the agent still ran as `fleetkit` moves its agent state to fleetkit-agent, and only
// that: root's firewall and sshd state beside it stays root's.
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { stringify } from 'yaml'

import { fillTemplate, readTemplate } from '../../../src/render/template.js'
import { dataMountCondition } from '../../../src/render/agent-seed.js'
import { generateSshHostKey } from '../../../src/render/ssh-host-key.js'
import { workerCloudConfig } from '../../../src/render/worker-seed.js'
import { eventually } from '../../support/eventually.js'
import { runProcess } from '../../support/process.js'
import {
  type ContainerHost,
  type OperatorKey,
  assertHostsAvailable,
  startContainerHosts,
  writeInventory,
} from '../../hosts/index.js'
import { generateOperatorKey } from '../../hosts/keys.js'
import { sshOptions } from '../../hosts/ssh.js'
import { type ReleaseMirror, startReleaseMirror } from './release-mirror.js'
import { TEST_HARNESS_VARS, checkConvergeIdempotent, runRoles, tail, writeRolePlaybook } from './role-runs.js'

const GATEWAY = { agent_gateway_url: 'https://gateway.test:8443', agent_enroll_url: 'https://gateway.test:8444' }
/** The operator account of the issue: the name fleetkit logs in with, which the agent used to run as. */
const OPERATOR = 'fleetkit'
const AGENT = 'fleetkit-agent'
/** The comment the role and the seed mark their account with (ansible/roles/agent/vars/main.yml). */
const MARKER = 'fleetkit-agent service account (managed by fleetkit)'

/** The worker seed's account entry for ssh.user OPERATOR (what `fleetkit seed --kind worker` renders). */
function operatorUserData(operator: OperatorKey): string {
  const seed = workerCloudConfig({
    nodeId: 'acct-op',
    user: OPERATOR,
    operatorKeys: [operator.publicKey],
    hostKey: generateSshHostKey('acct-op'),
    guard: { operatorCidrs: ['10.231.0.1/32'] },
  })
  // Only the account: the harness pins its own host key and keeps root's login for its probes.
  return `#cloud-config\n${stringify({ users: seed.users })}`
}

describe('role: agent keeps its own account, never an operator account (issue 25)', function () {
  // Two hosts and up to six role runs on a shared 2-core machine.
  this.timeout(1_200_000)
  let dir: string
  let operator: OperatorKey
  let mirror: ReleaseMirror
  let seeded: ContainerHost
  let legacy: ContainerHost
  let site: string
  let agentOnly: string
  const vars = () => ({
    ...TEST_HARNESS_VARS,
    ...GATEWAY,
    agent_update_url: mirror.url,
    agent_update_version: '1.0.0',
    agent_update_public_key: mirror.publicKey,
    agent_update_ca_pem: mirror.caPem,
  })
  /** What a role could change about an account: its passwd line and its groups. */
  const account = async (host: ContainerHost, name: string) =>
    (await host.ssh(`getent passwd ${name}; id ${name}; getent group ${name}`)).stdout
  const unitUser = async (host: ContainerHost) =>
    (await host.sshOk('systemctl show -P User fleetkit-agent.service')).stdout.trim()
  const mainPidUser = (host: ContainerHost) =>
    eventually(`${host.name}: fleetkit-agent running`, async () => {
      const [user, comm] = (
        await host.ssh('ps -o user:64=,comm= -p "$(systemctl show -P MainPID fleetkit-agent.service)"')
      ).stdout
        .trim()
        .split(/\s+/)
      // Until it execs the agent, the unit's main process is systemd's own child, "(fleetkit-agent)" or
      // "(sd-exec...)", still root: its user is the unit's only once it runs the agent.
      return user && comm && !comm.startsWith('(') ? user : undefined
    })

  before(async () => {
    await assertHostsAvailable('container')
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-role-agent-account-'))
    operator = await generateOperatorKey(dir)
    mirror = await startReleaseMirror(join(dir, 'mirror'), ['1.0.0'])
    const userData = operatorUserData(operator)
    ;[seeded, legacy] = (await startContainerHosts(2, (i) =>
      i === 0 ? { name: 'acct-op', operator, seed: { userData } } : { name: 'acct-old', operator },
    )) as [ContainerHost, ContainerHost]
    site = await writeRolePlaybook(dir, 'site', ['agent_update', 'agent'])
    agentOnly = await writeRolePlaybook(dir, 'agent', ['agent'])
  })

  after(async () => {
    await seeded?.stop()
    await legacy?.stop()
    await mirror?.close()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('a node whose SSH user is fleetkit converges as that operator, who can still log in with a shell and sudo', async () => {
    // Ansible logs in as the operator, as `fleetkit sync` does for ssh.user: fleetkit.
    const inventory = await writeInventory([seeded], join(dir, 'seeded'), {
      [seeded.name]: { ansible_user: OPERATOR, agent_node_id: 'acct-op' },
    })
    const before = await account(seeded, OPERATOR)
    assert.match(
      before,
      new RegExp(`^${OPERATOR}:x:\\d+:\\d+:fleetkit operator account:/home/${OPERATOR}:/bin/bash$`, 'm'),
    )
    await checkConvergeIdempotent({
      inventory,
      playbook: site,
      hosts: [seeded.name],
      extraVars: vars(),
      verifyUntouched: async () => {
        assert.equal(
          (await seeded.ssh(`id ${AGENT} || test -e /var/lib/fleetkit`)).code,
          1,
          'check mode changed the host',
        )
        assert.equal(await account(seeded, OPERATOR), before, 'check mode changed the operator account')
      },
    })
    assert.equal(await account(seeded, OPERATOR), before, 'the role changed the operator account')
    // The operator logs in afresh: a login shell and sudo, as before the sync.
    const login = await runProcess('ssh', [
      ...sshOptions(seeded, join(inventory.dir, 'known_hosts')),
      '-p',
      String(seeded.port),
      `${OPERATOR}@${seeded.address}`,
      '--',
      'id -un; echo "$SHELL"; sudo -n true && echo sudo-ok',
    ])
    assert.equal(login.code, 0, login.stderr)
    assert.deepEqual(login.stdout.trim().split('\n'), [OPERATOR, '/bin/bash', 'sudo-ok'])
    // The agent has an account of its own, marked as fleetkit's, that no one logs in as.
    const agent = (await seeded.sshOk(`getent passwd ${AGENT}`)).stdout.trim().split(':')
    assert.deepEqual(agent.slice(4), [MARKER, '/var/lib/fleetkit', '/usr/sbin/nologin'])
    assert.equal(await unitUser(seeded), AGENT)
    assert.equal(await mainPidUser(seeded), AGENT)
    assert.equal((await seeded.sshOk('stat -c %a:%U:%G /var/lib/fleetkit')).stdout.trim(), `700:${AGENT}:${AGENT}`)
  })

  it('refuses an account or a group named fleetkit-agent it did not create, with AGENT_ACCOUNT_FOREIGN, and changes neither', async () => {
    const inventory = await writeInventory([legacy], join(dir, 'legacy'), {
      [legacy.name]: { agent_node_id: 'acct-old' },
    })
    // Someone's own account that happens to have the name.
    await legacy.sshOk(`useradd --create-home --shell /bin/bash --comment 'a person' ${AGENT}`)
    const person = await account(legacy, AGENT)
    const refused = await runRoles({ inventory, playbook: agentOnly, extraVars: vars() })
    assert.notEqual(refused.code, 0, tail(refused))
    assert.match(
      refused.stdout,
      /AGENT_ACCOUNT_FOREIGN: the account fleetkit-agent exists \(comment \\?"a person\\?"\) but fleetkit did not create it/,
    )
    assert.equal(await account(legacy, AGENT), person, 'the role changed an account it did not create')
    assert.equal((await legacy.ssh('test -e /var/lib/fleetkit || test -e /etc/fleetkit/agent.env')).code, 1)

    // A group of that name without the account: the role would otherwise make it the agent's group.
    await legacy.sshOk(`userdel --remove ${AGENT} && groupadd ${AGENT}`)
    const group = await account(legacy, AGENT)
    const groupRefused = await runRoles({ inventory, playbook: agentOnly, extraVars: vars() })
    assert.notEqual(groupRefused.code, 0, tail(groupRefused))
    assert.match(groupRefused.stdout, /AGENT_ACCOUNT_FOREIGN: the group fleetkit-agent exists without the account/)
    assert.equal(await account(legacy, AGENT), group)
    await legacy.sshOk(`groupdel ${AGENT}`)
  })

  it("a host converged when the agent ran as fleetkit: check changes nothing, then its state moves to fleetkit-agent, root's stays root's", async () => {
    const inventory = await writeInventory([legacy], join(dir, 'legacy'), {
      [legacy.name]: { agent_node_id: 'acct-old' },
    })
    // What the seed and the role made before issue 25: the `fleetkit` account, its state and a unit
    // whose only difference from today's is User= and Group=.
    const oldUnit = `${fillTemplate(readTemplate('fleetkit-agent.service.tmpl'), {
      DATA_MOUNT_CONDITION: dataMountCondition(''),
    })
      .trimEnd()
      .replace(`User=${AGENT}\nGroup=${AGENT}`, 'User=fleetkit\nGroup=fleetkit')}\n`
    assert.ok(oldUnit.includes('User=fleetkit\n'))
    await legacy.sshOk(
      [
        'useradd --system --home-dir /var/lib/fleetkit --shell /usr/sbin/nologin --user-group fleetkit',
        'install -d -m 0700 -o fleetkit -g fleetkit /var/lib/fleetkit /var/lib/fleetkit/pki',
        'install -m 0600 -o fleetkit -g fleetkit /dev/null /var/lib/fleetkit/pki/identity',
        'install -m 0600 -o fleetkit -g fleetkit /dev/null /var/lib/fleetkit/enrollment-secret',
        // Root's state beside it (the firewall and sshd roles run before the agent role): never the agent's.
        'install -d -m 0755 /var/lib/fleetkit/firewall && install -m 0644 /dev/null /var/lib/fleetkit/firewall/applied.nft',
        'install -d -m 0700 /var/lib/fleetkit/sshd /var/lib/fleetkit/sshd/previous.d',
        // A link the old account could have planted: re-owned itself, never what it points at.
        'install -m 0600 -o root -g root /dev/null /etc/fleetkit-not-the-agents',
        'ln -s /etc/fleetkit-not-the-agents /var/lib/fleetkit/pki/link && chown -h fleetkit:fleetkit /var/lib/fleetkit/pki/link',
        'install -d -m 0755 /etc/fleetkit',
        // The unit's EnvironmentFile; the role writes its content.
        'install -m 0644 /dev/null /etc/fleetkit/agent.env',
      ].join(' && '),
    )
    // The binary before the unit: agent_update alone on a host with no unit yet installs it and its
    // try-restart handler has nothing to restart (systemctl's exit 5), which is not a failure.
    const update = await writeRolePlaybook(dir, 'update', ['agent_update'])
    const installed = await runRoles({ inventory, playbook: update, extraVars: vars() })
    assert.equal(installed.code, 0, tail(installed))
    await legacy.sshOk('cat > /etc/systemd/system/fleetkit-agent.service', { input: oldUnit })
    await legacy.sshOk('systemctl daemon-reload && systemctl enable --now fleetkit-agent.service')
    assert.equal(await mainPidUser(legacy), 'fleetkit')
    const oldAccount = await account(legacy, 'fleetkit')
    const owners = 'find /var/lib/fleetkit -printf "%p %u:%g\\n" | sort; stat -c %U /etc/fleetkit-not-the-agents'

    const { check } = await checkConvergeIdempotent({
      inventory,
      playbook: site,
      hosts: [legacy.name],
      extraVars: vars(),
      verifyUntouched: async () => {
        assert.equal((await legacy.ssh(`id ${AGENT}`)).code, 1, 'check mode created the account')
        assert.equal(await unitUser(legacy), 'fleetkit', 'check mode changed the unit')
        assert.doesNotMatch((await legacy.sshOk(owners)).stdout, new RegExp(AGENT))
      },
    })
    assert.ok((check.recap[legacy.name]?.changed ?? 0) > 0, 'check mode did not show the migration')

    assert.equal(
      (await legacy.sshOk(owners)).stdout,
      [
        `/var/lib/fleetkit ${AGENT}:${AGENT}`,
        `/var/lib/fleetkit/enrollment-secret ${AGENT}:${AGENT}`,
        '/var/lib/fleetkit/firewall root:root',
        '/var/lib/fleetkit/firewall/applied.nft root:root',
        `/var/lib/fleetkit/pki ${AGENT}:${AGENT}`,
        `/var/lib/fleetkit/pki/identity ${AGENT}:${AGENT}`,
        `/var/lib/fleetkit/pki/link ${AGENT}:${AGENT}`,
        '/var/lib/fleetkit/sshd root:root',
        '/var/lib/fleetkit/sshd/previous.d root:root',
        'root',
        '',
      ].join('\n'),
    )
    assert.equal(await unitUser(legacy), AGENT)
    assert.equal(await mainPidUser(legacy), AGENT)
    // The agent's account can read its identity; the old account is left as it was.
    await legacy.sshOk(`runuser -u ${AGENT} -- cat /var/lib/fleetkit/pki/identity`)
    assert.equal(await account(legacy, 'fleetkit'), oldAccount)
  })
})
