// br_netfilter on a real container host: the container shares this machine's kernel, which has
// br_netfilter (loaded or built in), so the role must accept it without a modprobe of its own.
// The VM part (modprobe and a reboot) is in vm.test.ts.
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { type ContainerHost, type Inventory, assertHostsAvailable, startContainerHosts, writeInventory } from '../../hosts/index.js'
import { checkConvergeIdempotent, writeRolePlaybook } from './role-runs.js'

describe('roles: br_netfilter on a container host', function () {
  let host: ContainerHost
  let dir: string
  let inventory: Inventory
  let playbook: string

  before(async () => {
    await assertHostsAvailable('container')
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-role-brnf-'))
    host = (await startContainerHosts(1, { name: 'brnf' }))[0]!
    inventory = await writeInventory([host], join(dir, 'inventory'))
    playbook = await writeRolePlaybook(dir, 'br_netfilter', ['br_netfilter'])
  })

  after(async () => {
    await host?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('check changes nothing; converge persists the module and sysctls; a second run changes nothing', async () => {
    await checkConvergeIdempotent({
      inventory, playbook, hosts: [host.name],
      verifyUntouched: async () => {
        assert.equal((await host.ssh('test -e /etc/modules-load.d/fleetkit.conf || test -e /etc/sysctl.d/90-fleetkit.conf')).code, 1, 'check mode wrote a file')
      },
    })
    assert.match((await host.sshOk('cat /etc/modules-load.d/fleetkit.conf')).stdout, /^br_netfilter$/m)
    const sysctls = (await host.sshOk('cat /etc/sysctl.d/90-fleetkit.conf')).stdout
    assert.match(sysctls, /^net\.bridge\.bridge-nf-call-iptables\s*=\s*1$/m)
    assert.match(sysctls, /^net\.bridge\.bridge-nf-call-ip6tables\s*=\s*1$/m)
    // Verified from outside the role: the values the agent's host:br-netfilter check reads.
    assert.equal((await host.sshOk('cat /proc/sys/net/bridge/bridge-nf-call-iptables /proc/sys/net/bridge/bridge-nf-call-ip6tables')).stdout, '1\n1\n')
  })
})
