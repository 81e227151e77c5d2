// The agent seed and the agent role fill the same templates (cloud-init/agent.env.tmpl and
// cloud-init/fleetkit-agent.service.tmpl); the unit's one placeholder text is written twice, so
// this proves the two spell it the same and that the seed no longer touches the kernel.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'

import { parse } from 'yaml'

import { packagePath } from '../../../src/package-root.js'
import { IDENTITY_REFUSED_EXIT } from '../../../src/agent/identity-refusal.js'
import { AGENT_SERVICE_ACCOUNT } from '../../../src/definition/rules/ssh-user-not-service-account.js'
import { DATA_MOUNT_CONDITION_PREFIX, NO_DATA_MOUNT_CONDITION } from '../../../src/render/agent-seed.js'

describe('render: the agent seed and the agent role agree', () => {
  const roleVars = parse(readFileSync(packagePath('ansible', 'roles', 'agent', 'vars', 'main.yml'), 'utf8')) as Record<
    string,
    string
  >

  it('fills the unit placeholder with the same text as ansible/roles/agent/vars/main.yml', () => {
    assert.equal(roleVars.__agent_mount_condition_none, NO_DATA_MOUNT_CONDITION)
    assert.equal(roleVars.__agent_mount_condition_mount, DATA_MOUNT_CONDITION_PREFIX)
  })

  it('the unit does not restart the agent on the exit status of a refused identity, and restarts it on any other', () => {
    const unit = readFileSync(packagePath('cloud-init', 'fleetkit-agent.service.tmpl'), 'utf8')
    assert.match(unit, /^Restart=always$/m)
    assert.deepEqual(
      [...unit.matchAll(/^RestartPreventExitStatus=(.*)$/gm)].map((m) => m[1]),
      [String(IDENTITY_REFUSED_EXIT)],
    )
  })

  it('the role reads the templates the seed embeds', () => {
    const tasks = readFileSync(packagePath('ansible', 'roles', 'agent', 'tasks', 'main.yml'), 'utf8')
    assert.match(tasks, /'\/agent\.env\.tmpl'/)
    assert.match(tasks, /'\/fleetkit-agent\.service\.tmpl'/)
    assert.match(roleVars.__agent_templates!, /\/\.\.\/\.\.\/\.\.\/cloud-init$/)
  })

  it('the seed writes agent.env from cloud-init/agent.env.tmpl and leaves br_netfilter to its role', () => {
    // The golden seed of the example fleet (test/unit/render/golden.test.ts keeps it current).
    const seed = readFileSync(packagePath('test', 'golden', 'agent-seed-build-1.sh'), 'utf8')
    const template = readFileSync(packagePath('cloud-init', 'agent.env.tmpl'), 'utf8')
    for (const line of template
      .trimEnd()
      .split('\n')
      .filter((l) => !l.includes('@@')))
      assert.ok(seed.includes(`\n${line}\n`), line)
    assert.doesNotMatch(seed, /modprobe|sysctl|modules-load\.d/)
  })

  it('run the agent as the one account validate reserves, marked the same way (issue 25)', () => {
    assert.equal(roleVars.__agent_user, AGENT_SERVICE_ACCOUNT)
    const unit = readFileSync(packagePath('cloud-init', 'fleetkit-agent.service.tmpl'), 'utf8')
    assert.match(unit, new RegExp(`^User=${AGENT_SERVICE_ACCOUNT}\nGroup=${AGENT_SERVICE_ACCOUNT}$`, 'm'))
    const seed = readFileSync(packagePath('cloud-init', 'agent-seed.sh.tmpl'), 'utf8')
    assert.ok(seed.includes(`agent_account_comment='${roleVars.__agent_account_comment}'`))
    assert.match(seed, new RegExp(`--comment "\\$agent_account_comment" ${AGENT_SERVICE_ACCOUNT}\n`))
    assert.match(
      seed,
      new RegExp(
        `^chown ${AGENT_SERVICE_ACCOUNT}:${AGENT_SERVICE_ACCOUNT} "\\$ROOT${roleVars.__agent_state_dir}"`,
        'm',
      ),
    )
    assert.match(seed, new RegExp(`--home-dir ${roleVars.__agent_state_dir} `))
    assert.match(seed, new RegExp(`^runuser -u ${AGENT_SERVICE_ACCOUNT} -- `, 'm'))
    // Every account the seed names is the agent's: no other name can slip back in.
    const named = [...seed.matchAll(/(?:id -u |getent (?:passwd|group) |runuser -u )([a-z_][a-z0-9_-]*)/g)].map(
      (m) => m[1],
    )
    assert.ok(named.length >= 4, named.join(' '))
    assert.deepEqual([...new Set(named)], [AGENT_SERVICE_ACCOUNT])
  })
})
