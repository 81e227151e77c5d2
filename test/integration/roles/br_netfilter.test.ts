// br_netfilter on a real container host: the container shares this machine's kernel, which has
// br_netfilter (loaded or built in), so the role must accept it without a modprobe of its own.
// The VM part (modprobe and a reboot) is in the VM end to end (test/integration/hosts/vm-agent-seed.test.ts).
import assert from 'node:assert/strict'

import { checkConvergeIdempotent, roleHostFixture } from './role-runs.js'

describe('roles: br_netfilter on a container host', function () {
  const fixture = roleHostFixture('brnf', ['br_netfilter'])

  it('check changes nothing; converge persists the module and sysctls; a second run changes nothing', async () => {
    await checkConvergeIdempotent({
      inventory: fixture.inventory,
      playbook: fixture.playbook,
      hosts: [fixture.host.name],
      verifyUntouched: async () => {
        assert.equal(
          (
            await fixture.host.ssh(
              'test -e /etc/modules-load.d/fleetkit.conf || test -e /etc/sysctl.d/90-fleetkit.conf',
            )
          ).code,
          1,
          'check mode wrote a file',
        )
      },
    })
    assert.match((await fixture.host.sshOk('cat /etc/modules-load.d/fleetkit.conf')).stdout, /^br_netfilter$/m)
    const sysctls = (await fixture.host.sshOk('cat /etc/sysctl.d/90-fleetkit.conf')).stdout
    assert.match(sysctls, /^net\.bridge\.bridge-nf-call-iptables\s*=\s*1$/m)
    assert.match(sysctls, /^net\.bridge\.bridge-nf-call-ip6tables\s*=\s*1$/m)
    // Verified from outside the role: the values the agent's host:br-netfilter check reads.
    assert.equal(
      (
        await fixture.host.sshOk(
          'cat /proc/sys/net/bridge/bridge-nf-call-iptables /proc/sys/net/bridge/bridge-nf-call-ip6tables',
        )
      ).stdout,
      '1\n1\n',
    )
  })
})
