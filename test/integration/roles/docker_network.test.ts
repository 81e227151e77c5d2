// docker_network on a real container host without a Docker engine (none is in the test image):
// the managed keys land in daemon.json beside the keys someone else wrote, nothing restarts,
// and a daemon.json with fixed-cidr or broken JSON is refused with its code and left as it was.
import assert from 'node:assert/strict'

import { TEST_HARNESS_VARS, checkConvergeIdempotent, runRoles, tail, roleHostFixture } from './role-runs.js'

const DOCKER_VARS = {
  docker_network_enabled: true,
  docker_network_default_address_pools: [{ base: '10.200.0.0/16', size: 24 }],
  docker_network_bip: '10.199.0.1/24',
}

describe('roles: docker_network on a container host', function () {
  const fixture = roleHostFixture('dockernet', ['docker_network'])

  it('is skipped where containers are off: no daemon.json', async () => {
    const run = await runRoles({
      inventory: fixture.inventory,
      playbook: fixture.playbook,
      extraVars: TEST_HARNESS_VARS,
    })
    assert.equal(run.code, 0, tail(run))
    assert.equal(run.recap[fixture.host.name]?.changed, 0)
    assert.equal((await fixture.host.ssh('test -e /etc/docker/daemon.json')).code, 1)
  })

  it('check changes nothing; converge keeps other keys and sets the managed ones; a second run changes nothing', async () => {
    await fixture.host.sshOk(
      'mkdir -p /etc/docker && printf \'{"log-driver": "journald", "bip": "172.17.0.1/16"}\' > /etc/docker/daemon.json',
    )
    const before = (await fixture.host.sshOk('sha256sum /etc/docker/daemon.json')).stdout
    const { converge } = await checkConvergeIdempotent({
      inventory: fixture.inventory,
      playbook: fixture.playbook,
      hosts: [fixture.host.name],
      extraVars: DOCKER_VARS,
      verifyUntouched: async () =>
        assert.equal(
          (await fixture.host.sshOk('sha256sum /etc/docker/daemon.json')).stdout,
          before,
          'check mode rewrote daemon.json',
        ),
    })
    const written = JSON.parse((await fixture.host.sshOk('cat /etc/docker/daemon.json')).stdout) as Record<
      string,
      unknown
    >
    assert.deepEqual(written, {
      'log-driver': 'journald',
      bip: '10.199.0.1/24',
      'default-address-pools': [{ base: '10.200.0.0/16', size: 24 }],
    })
    // No Docker on the host: the file waits for it and the handler did not try a restart.
    assert.doesNotMatch(converge.stdout, /RUNNING HANDLER \[docker_network : Restart Docker\][^\n]*\n(changed|fatal)/)
  })

  it('does not rewrite a file whose managed keys already match, however it is formatted', async () => {
    await fixture.host.sshOk(
      'printf \'{"default-address-pools":[{"base":"10.200.0.0/16","size":24}],"bip":"10.199.0.1/24","log-driver":"journald"}\' > /etc/docker/daemon.json',
    )
    const run = await runRoles({
      inventory: fixture.inventory,
      playbook: fixture.playbook,
      extraVars: { ...TEST_HARNESS_VARS, ...DOCKER_VARS },
    })
    assert.equal(run.code, 0, tail(run))
    assert.equal(run.recap[fixture.host.name]?.changed, 0, tail(run))
  })

  it('refuses fixed-cidr with DOCKER_FIXED_CIDR_REFUSED and leaves the file alone', async () => {
    await fixture.host.sshOk('printf \'{"fixed-cidr": "10.1.0.0/24"}\' > /etc/docker/daemon.json')
    const run = await runRoles({
      inventory: fixture.inventory,
      playbook: fixture.playbook,
      extraVars: { ...TEST_HARNESS_VARS, ...DOCKER_VARS },
    })
    assert.notEqual(run.code, 0)
    assert.match(
      run.stdout,
      /DOCKER_FIXED_CIDR_REFUSED: \/etc\/docker\/daemon\.json sets fixed-cidr \(10\.1\.0\.0\/24\)/,
    )
    assert.equal((await fixture.host.sshOk('cat /etc/docker/daemon.json')).stdout, '{"fixed-cidr": "10.1.0.0/24"}')
  })

  it('refuses a daemon.json that is not JSON with DOCKER_DAEMON_JSON_INVALID', async () => {
    await fixture.host.sshOk('printf \'{"bip": \' > /etc/docker/daemon.json')
    const run = await runRoles({
      inventory: fixture.inventory,
      playbook: fixture.playbook,
      extraVars: { ...TEST_HARNESS_VARS, ...DOCKER_VARS },
    })
    assert.notEqual(run.code, 0)
    assert.match(run.stdout, /DOCKER_DAEMON_JSON_INVALID/)
    assert.equal((await fixture.host.sshOk('cat /etc/docker/daemon.json')).stdout, '{"bip": ')
  })
})
