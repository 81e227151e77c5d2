// agent_update and agent on a real container host, from a signed release served by a private
// mirror on this machine: the pinned release verified and installed, the hardened unit (the seed's
// own bytes) enabled and active; a new version restarts the agent once, an unchanged one never; a
// downgrade happens only when the run asks for it.
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { dataMountCondition } from '../../../src/render/agent-seed.js'
import { fillTemplate, readTemplate } from '../../../src/render/template.js'
import {
  type ContainerHost,
  type Inventory,
  assertHostsAvailable,
  startContainerHosts,
  writeInventory,
} from '../../hosts/index.js'
import { type ReleaseMirror, startReleaseMirror } from './release-mirror.js'
import { TEST_HARNESS_VARS, checkConvergeIdempotent, runRoles, tail, writeRolePlaybook } from './role-runs.js'

const GATEWAY = { agent_gateway_url: 'https://gateway.test:8443', agent_enroll_url: 'https://gateway.test:8444' }

describe('roles: agent_update and agent on a container host', function () {
  let host: ContainerHost
  let dir: string
  let inventory: Inventory
  let mirror: ReleaseMirror
  let site: string
  let update: string
  const pin = (version: string, extra: Record<string, unknown> = {}) => ({
    ...TEST_HARNESS_VARS,
    ...GATEWAY,
    ...extra,
    agent_update_url: mirror.url,
    agent_update_version: version,
    agent_update_public_key: mirror.publicKey,
    agent_update_ca_pem: mirror.caPem,
  })
  const mainPid = async () => (await host.sshOk('systemctl show -P MainPID fleetkit-agent.service')).stdout.trim()

  before(async () => {
    await assertHostsAvailable('container')
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-role-agent-'))
    host = (await startContainerHosts(1, { name: 'agent' }))[0]!
    mirror = await startReleaseMirror(join(dir, 'mirror'), ['1.0.0', '1.1.0'])
    inventory = await writeInventory([host], join(dir, 'inventory'), { [host.name]: { agent_node_id: 'build-1' } })
    site = await writeRolePlaybook(dir, 'agent', ['agent_update', 'agent'])
    update = await writeRolePlaybook(dir, 'update', ['agent_update'])
  })

  after(async () => {
    await host?.stop()
    await mirror?.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('check changes nothing; converge installs the verified release and starts the unit; a second run changes nothing', async () => {
    await checkConvergeIdempotent({
      inventory,
      playbook: site,
      hosts: [host.name],
      extraVars: pin('1.0.0'),
      verifyUntouched: async () => {
        assert.equal(
          (
            await host.ssh(
              'test -e /usr/local/bin/fleetkit-agent || test -e /etc/systemd/system/fleetkit-agent.service || id fleetkit-agent',
            )
          ).code,
          1,
          'check mode changed the host',
        )
      },
    })
    assert.equal((await host.sshOk('/usr/local/bin/fleetkit-agent --version')).stdout.trim(), '1.0.0')
    assert.equal((await host.sshOk('systemctl is-enabled fleetkit-agent.service')).stdout.trim(), 'enabled')
    assert.equal((await host.sshOk('systemctl is-active fleetkit-agent.service')).stdout.trim(), 'active')
    assert.equal(
      (await host.sshOk('ps -o user= -p "$(systemctl show -P MainPID fleetkit-agent.service)"')).stdout.trim(),
      'fleetkit-agent',
    )
    // The seed's bytes: a seeded host converges with changed=0.
    const unit = `${fillTemplate(readTemplate('fleetkit-agent.service.tmpl'), { DATA_MOUNT_CONDITION: dataMountCondition('') }).trimEnd()}\n`
    assert.equal((await host.sshOk('cat /etc/systemd/system/fleetkit-agent.service')).stdout, unit)
    const env = `${fillTemplate(readTemplate('agent.env.tmpl'), { NODE_ID: 'build-1', GATEWAY_URL: GATEWAY.agent_gateway_url, ENROLL_URL: GATEWAY.agent_enroll_url, DATA_MOUNT: '', CONTAINER: 'false' }).trimEnd()}\n`
    assert.equal((await host.sshOk('cat /etc/fleetkit/agent.env')).stdout, env)
    assert.equal((await host.sshOk('stat -c %a:%U /var/lib/fleetkit')).stdout.trim(), '700:fleetkit-agent')
    // The drift check (docs/agent.md, "Drift"): its timer runs as root; with no sync's resource list yet it
    // says so in a state file the agent's account can read, and writes nothing else.
    assert.equal((await host.sshOk('systemctl is-enabled fleetkit-drift-check.timer')).stdout.trim(), 'enabled')
    await host.sshOk('systemctl start fleetkit-drift-check.service')
    const state = JSON.parse(
      (await host.sshOk('runuser -u fleetkit-agent -- cat /run/fleetkit/fingerprint/state.json')).stdout,
    ) as { error?: string; cost?: { cpu_ms: number } }
    assert.match(state.error ?? '', /fingerprint-resources\.json/)
    assert.ok((state.cost?.cpu_ms ?? -1) >= 0, JSON.stringify(state))
    assert.equal((await host.sshOk('stat -c %a:%U /run/fleetkit/fingerprint/state.json')).stdout.trim(), '644:root')
  })

  it('a new pinned version replaces the binary and restarts the agent once; the same pin again restarts nothing', async () => {
    const before = await mainPid()
    const moved = await runRoles({ inventory, playbook: update, extraVars: pin('1.1.0') })
    assert.equal(moved.code, 0, tail(moved))
    assert.ok((moved.recap[host.name]?.changed ?? 0) >= 2, tail(moved)) // the binary and the restart handler
    assert.equal((await host.sshOk('/usr/local/bin/fleetkit-agent --version')).stdout.trim(), '1.1.0')
    const after = await mainPid()
    assert.notEqual(after, before, 'the agent was not restarted for a new binary')
    const same = await runRoles({ inventory, playbook: update, extraVars: pin('1.1.0') })
    assert.equal(same.code, 0, tail(same))
    assert.equal(same.recap[host.name]?.changed, 0, tail(same))
    assert.equal(await mainPid(), after, 'the agent was restarted for an unchanged binary')
  })

  it('refuses a downgrade with AGENT_DOWNGRADE_REFUSED unless the run allows it', async () => {
    const refused = await runRoles({ inventory, playbook: update, extraVars: pin('1.0.0') })
    assert.notEqual(refused.code, 0)
    assert.match(
      refused.stdout,
      /AGENT_DOWNGRADE_REFUSED: this host runs fleetkit-agent 1\.1\.0, newer than the pinned 1\.0\.0/,
    )
    assert.equal((await host.sshOk('/usr/local/bin/fleetkit-agent --version')).stdout.trim(), '1.1.0')
    const allowed = await runRoles({
      inventory,
      playbook: update,
      extraVars: pin('1.0.0', { agent_update_allow_downgrade: true }),
    })
    assert.equal(allowed.code, 0, tail(allowed))
    assert.equal((await host.sshOk('/usr/local/bin/fleetkit-agent --version')).stdout.trim(), '1.0.0')
  })

  it('a release signed by another key is refused by the verifier and the installed binary stays', async () => {
    const other = await startReleaseMirror(join(dir, 'other'), ['1.1.0'])
    try {
      const run = await runRoles({
        inventory,
        playbook: update,
        extraVars: { ...pin('1.1.0'), agent_update_public_key: other.publicKey },
      })
      assert.notEqual(run.code, 0)
      assert.match(run.stdout, /RELEASE_SIGNATURE_INVALID/)
      assert.equal((await host.sshOk('/usr/local/bin/fleetkit-agent --version')).stdout.trim(), '1.0.0')
    } finally {
      await other.close()
      await runRoles({ inventory, playbook: update, extraVars: pin('1.0.0') })
    }
  })
})
