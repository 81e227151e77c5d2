// preflight on a real container host (Debian 12, a production release of the shipped policy):
// accepts it with no release switch, refuses a container unless the harness says it is one, the local
// cloud marked it, or the node declares it (fleetkit_container, with its kernel parts not applicable), refuses a release the
// policy does not list, compares releases by major version, changes nothing.
import assert from 'node:assert/strict'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

import { parse, stringify } from 'yaml'

import { packagePath } from '../../../src/package-root.js'
import { writeInventory } from '../../hosts/index.js'
import { agentBundle } from '../../support/agent-bundle.js'
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
    assert.match(
      run.stdout,
      /HOST_VIRT_REFUSED: this host is a container \(systemd-nspawn\) and its node does not declare one/,
    )
    assert.match(run.stdout, /declare container: true on the node in fleet.yaml/)
  })

  it("accepts an undeclared container that carries the local cloud's mark, with no harness variable", async () => {
    const mark = '/etc/fleetkit-local-cloud-machine'
    await fixture.host.sshOk(`echo '# fleetkit local cloud' > ${mark}`)
    try {
      const run = await runRoles({
        inventory: fixture.inventory,
        playbook: fixture.playbook,
        extraVars: { ...TEST_HARNESS_VARS, preflight_allow_container: false },
      })
      assert.equal(run.code, 0, tail(run))
      assert.doesNotMatch(run.stdout, /HOST_VIRT_REFUSED/)
      assert.match(
        run.stdout,
        /a container \(systemd-nspawn\) of fleetkit's local cloud standing in for a provider's VM/,
      )
      assert.match(run.stdout, /"container": false/)
    } finally {
      await fixture.host.sshOk(`rm -f ${mark}`)
    }
  })

  describe('a node that declares container: true (the product path: no harness variable)', () => {
    /**
     * The inventory's variables as `fleetkit inventory` renders them for a declared container, mapped
     * to role inputs by the playbooks' own ansible/playbooks/vars/roles.yml; no -e of any kind.
     */
    async function declaredContainerRun(check = false) {
      const policy = parse(await readFile(packagePath('policy', 'host-policy.yaml'), 'utf8')) as unknown
      const inventory = await writeInventory([fixture.host], join(fixture.dir, 'declared'), {
        [fixture.host.name]: { fleetkit_container: true, fleetkit_host_policy: policy },
      })
      const playbook = join(fixture.dir, 'declared-container.yml')
      await writeFile(
        playbook,
        stringify([
          {
            name: 'Converge a declared container',
            hosts: 'all',
            become: true,
            gather_facts: false,
            vars_files: [packagePath('ansible', 'playbooks', 'vars', 'roles.yml')],
            roles: [{ role: 'preflight' }, { role: 'br_netfilter' }],
          },
        ]),
      )
      return runRoles({ inventory, playbook, check, diff: check })
    }

    it('accepts the container, reports br_netfilter not applicable and changes nothing (check, converge, again)', async () => {
      const before = (await fixture.host.sshOk('find /etc -newer /etc/hostname -type f | sort')).stdout
      for (const check of [true, false, false]) {
        const run = await declaredContainerRun(check)
        assert.equal(run.code, 0, tail(run))
        assert.equal(run.recap[fixture.host.name]?.changed, 0, tail(run, 80))
        assert.doesNotMatch(run.stdout, /HOST_VIRT_REFUSED/)
        assert.match(run.stdout, /"container": true/)
        assert.match(run.stdout, /not applicable: this host is a declared container \(systemd-nspawn\)/)
        assert.match(run.stdout, /not applicable: the node declares container: true; br_netfilter/)
      }
      // The role did not touch the kernel's files: no modules-load.d or sysctl.d drop-in was written.
      assert.equal((await fixture.host.sshOk('find /etc -newer /etc/hostname -type f | sort')).stdout, before)
      assert.equal((await fixture.host.ssh('test -e /etc/modules-load.d/fleetkit.conf')).code, 1)
    })

    it("the agent's checks on it report host:br-netfilter not_applicable, with no code", async () => {
      const bundle = await readFile(await agentBundle())
      await fixture.host.sshOk('install -d -m 0700 /run/fleetkit-test && cat > /run/fleetkit-test/agent.cjs', {
        input: bundle.toString('utf8'),
      })
      const doctor = await fixture.host.ssh(
        'FLEETKIT_AGENT_CONFIG=/dev/null FLEETKIT_CONTAINER=true FLEETKIT_NODE_ID=pre-1 ' +
          'FLEETKIT_AGENT_PKI_DIR=/run/fleetkit-test/pki node /run/fleetkit-test/agent.cjs doctor',
      )
      const line = doctor.stdout.split('\n').find((l) => / host:br-netfilter /.test(l)) ?? doctor.stdout + doctor.stderr
      assert.match(line, /^not_applicable host:br-netfilter +the node declares container: true/)
      assert.doesNotMatch(line, /\(BR_NETFILTER/)
    })

    it('refuses a declared container that is a VM or bare metal with HOST_CONTAINER_NOT_CONTAINER', async () => {
      // The one stand-in: systemd-detect-virt answers as on a VM (first on root's PATH); the role is real.
      await fixture.host.sshOk(
        "printf '#!/bin/sh\\necho none\\nexit 1\\n' > /usr/local/bin/systemd-detect-virt && chmod 0755 /usr/local/bin/systemd-detect-virt",
      )
      try {
        const run = await declaredContainerRun()
        assert.notEqual(run.code, 0, tail(run))
        assert.match(
          run.stdout,
          /HOST_CONTAINER_NOT_CONTAINER: the node declares container: true but this host is not a container/,
        )
        assert.equal(run.recap[fixture.host.name]?.changed, 0, tail(run))
      } finally {
        await fixture.host.sshOk('rm -f /usr/local/bin/systemd-detect-virt')
      }
    })
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
