// preflight on a real container host (Debian 12, a production release of the shipped policy):
// accepts it with no release switch, refuses a container unless the harness says it is one, refuses
// a release the policy does not list, compares releases by major version, changes nothing.
import assert from 'node:assert/strict'

import { TEST_HARNESS_VARS, checkConvergeIdempotent, runRoles, tail, roleHostFixture } from './role-runs.js'

describe('roles: preflight on a container host', function () {
  const fixture = roleHostFixture('preflight', [])

  it('check, converge and a second run change nothing, and report the host facts', async () => {
    const before = (await fixture.host.sshOk('find /etc -newer /etc/hostname -type f | sort')).stdout
    const { converge } = await checkConvergeIdempotent({
      inventory: fixture.inventory,
      playbook: fixture.playbook,
      hosts: [fixture.host.name],
    })
    assert.equal(converge.recap[fixture.host.name]?.changed, 0, tail(converge))
    assert.match(converge.stdout, /"release": "debian"/)
    assert.match(converge.stdout, /"virtualization": "systemd-nspawn"/)
    assert.equal((await fixture.host.sshOk('find /etc -newer /etc/hostname -type f | sort')).stdout, before)
  })

  it('refuses a container with HOST_VIRT_REFUSED unless the harness allows it', async () => {
    const run = await runRoles({
      inventory: fixture.inventory,
      playbook: fixture.playbook,
      extraVars: { ...TEST_HARNESS_VARS, preflight_allow_container: false },
    })
    assert.notEqual(run.code, 0)
    assert.match(run.stdout, /HOST_VIRT_REFUSED: this host is a container \(systemd-nspawn\)/)
  })

  it('refuses a release the policy does not list with HOST_RELEASE_UNSUPPORTED, naming the accepted ones', async () => {
    const run = await runRoles({
      inventory: fixture.inventory,
      playbook: fixture.playbook,
      extraVars: {
        ...TEST_HARNESS_VARS,
        preflight_host_policy: {
          version: 1,
          architectures: ['amd64', 'arm64'],
          releases: [
            { id: 'ubuntu', version: '24.04', codename: 'noble' },
            { id: 'debian', version: '13', codename: 'trixie' },
          ],
          sizing: { minimum: { cpu: 1, memoryMiB: 1, rootDiskMiB: 1 } },
        },
      },
    })
    assert.notEqual(run.code, 0)
    assert.match(
      run.stdout,
      /HOST_RELEASE_UNSUPPORTED: debian 12(\.\d+)? is not an accepted release in policy\/host-policy.yaml \(ubuntu 24.04, debian 13\)/,
    )
  })

  it('compares the release by the policy version\'s precision: "12" accepts 12.x, "12.0" and "11" do not', async () => {
    const policy = (releases: unknown[]) => ({
      version: 1,
      architectures: ['amd64', 'arm64'],
      releases,
      sizing: { minimum: { cpu: 1, memoryMiB: 1, rootDiskMiB: 1 } },
    })
    const accepted = await runRoles({
      inventory: fixture.inventory,
      playbook: fixture.playbook,
      extraVars: {
        ...TEST_HARNESS_VARS,
        preflight_host_policy: policy([{ id: 'debian', version: '12' }]),
      },
    })
    assert.equal(accepted.code, 0, tail(accepted))
    const minor = (await fixture.host.sshOk('cat /etc/debian_version')).stdout.trim()
    assert.match(minor, /^12\.\d+$/)
    for (const version of ['11', minor === '12.0' ? '12.1' : '12.0']) {
      const refused = await runRoles({
        inventory: fixture.inventory,
        playbook: fixture.playbook,
        extraVars: { ...TEST_HARNESS_VARS, preflight_host_policy: policy([{ id: 'debian', version }]) },
      })
      assert.notEqual(refused.code, 0, `policy debian ${version} accepted ${minor}`)
      assert.match(refused.stdout, /HOST_RELEASE_UNSUPPORTED/)
    }
  })

  it('refuses a host below the policy size with HOST_SIZE_BELOW_MINIMUM', async () => {
    const policy = {
      version: 1,
      architectures: ['amd64', 'arm64'],
      releases: [{ id: 'debian', version: '12' }],
      sizing: { minimum: { cpu: 4096, memoryMiB: 1, rootDiskMiB: 1 } },
    }
    const run = await runRoles({
      inventory: fixture.inventory,
      playbook: fixture.playbook,
      extraVars: { ...TEST_HARNESS_VARS, preflight_host_policy: policy },
    })
    assert.notEqual(run.code, 0)
    assert.match(run.stdout, /HOST_SIZE_BELOW_MINIMUM: \d+ CPUs/)
  })
})
