// docker on a real container host whose only apt source is a local file: repository of the
// distribution's own packages (local-apt-repo.ts: the hosts have no route out): with containers on,
// check changes nothing, converge installs docker.io and runs the engine, a second run changes
// nothing; turned off, check mode (what `sync --dry-run` runs) shows the removal first, then it goes.
import assert from 'node:assert/strict'

import { TEST_HARNESS_VARS, checkConvergeIdempotent, roleHostFixture, runRoles, tail } from './role-runs.js'
import { serveDistributionPackages } from './local-apt-repo.js'

const PACKAGE = 'docker.io'

describe('roles: docker on a container host', function () {
  const fixture = roleHostFixture('docker', ['docker'])
  const installed = async () =>
    (await fixture.host.ssh(`dpkg-query -W -f='\${db:Status-Abbrev}' ${PACKAGE}`)).stdout.trim() === 'ii'

  it('with containers on: check changes nothing; converge installs the distribution package and runs it; a second run changes nothing', async () => {
    await serveDistributionPackages(fixture.host, [PACKAGE])
    await checkConvergeIdempotent({
      inventory: fixture.inventory,
      playbook: fixture.playbook,
      hosts: [fixture.host.name],
      extraVars: { docker_enabled: true },
      verifyUntouched: async () => assert.equal(await installed(), false, 'check mode installed Docker'),
    })
    assert.equal(await installed(), true)
    assert.equal((await fixture.host.ssh('systemctl is-enabled docker.service')).stdout.trim(), 'enabled')
    assert.equal((await fixture.host.ssh('systemctl is-active docker.service')).stdout.trim(), 'active')
    // The engine answers on its socket, not only a unit that started.
    assert.match((await fixture.host.sshOk("docker version --format '{{.Server.Version}}'")).stdout, /^\d+\.\d+/)
  })

  it('turned off: check mode shows the removal and changes nothing; then the run removes it', async () => {
    const off = { ...TEST_HARNESS_VARS, docker_enabled: false }
    const dry = await runRoles({
      inventory: fixture.inventory,
      playbook: fixture.playbook,
      extraVars: off,
      check: true,
      diff: true,
    })
    assert.equal(dry.code, 0, tail(dry))
    assert.equal(dry.recap[fixture.host.name]?.changed, 1, tail(dry))
    assert.match(
      dry.stdout,
      /TASK \[docker : Remove Docker Engine \(features\.containers is off\)\][^\n]*\n(?:[^\n]*\n)*?changed: /,
    )
    assert.equal(await installed(), true, 'check mode removed Docker')

    const removed = await runRoles({ inventory: fixture.inventory, playbook: fixture.playbook, extraVars: off })
    assert.equal(removed.code, 0, tail(removed))
    assert.equal(await installed(), false)
  })
})
