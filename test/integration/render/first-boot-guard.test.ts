// The seeds' first-boot guard: the nftables ruleset rendered from the definition's values is
// checked by `nft -c -f` against this kernel (nothing is applied), the guard script is POSIX sh
// that shellcheck accepts, and it writes the very files the br_netfilter role keeps, so the role's
// first run finds them in place. The firewall role's take-over is proven on a container host
// (test/integration/hosts/first-boot-guard.test.ts).
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { parse } from 'yaml'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { packagePath } from '../../../src/package-root.js'
import {
  BR_NETFILTER_MODULES_CONTENT,
  BR_NETFILTER_MODULES_FILE,
  BR_NETFILTER_SYSCTL_FILE,
  BR_NETFILTER_SYSCTLS,
  firstBootGuardScript,
  firstBootRuleset,
  type FirstBootGuardInput,
} from '../../../src/render/first-boot-guard.js'
import { runProcess, runProcessOk } from '../../support/process.js'

describe('render: the first-boot guard both seeds run', function () {
  this.timeout(60_000)
  let dir: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-first-boot-'))
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  async function nftCheck(name: string, input: FirstBootGuardInput): Promise<string> {
    const rules = firstBootRuleset(input)
    const path = join(dir, `${name}.nft`)
    await writeFile(path, rules)
    const check = await runProcess('nft', ['-c', '-f', path])
    assert.equal(check.code, 0, `${name}: nft -c refused the ruleset:\n${check.stderr}\n${rules}`)
    return rules
  }

  it('admits SSH on the node port from the IPv4 and IPv6 operator ranges only, and nft accepts it', async () => {
    const rules = await nftCheck('mixed', { operatorCidrs: ['203.0.113.0/24', '2001:db8:1::/48'], sshPort: 2222 })
    assert.match(rules, /^table inet fleetkit \{\}\ndelete table inet fleetkit\n/m)
    assert.match(rules, /elements = \{ 203\.0\.113\.0\/24 \}/)
    assert.match(rules, /elements = \{ 2001:db8:1::\/48 \}/)
    assert.match(rules, /^\t\tip saddr @operators_v4 tcp dport 2222 accept/m)
    assert.match(rules, /^\t\tip6 saddr @operators_v6 tcp dport 2222 accept/m)
    assert.match(rules, /type filter hook input priority filter; policy drop;/)
    assert.match(rules, /^\t\tiif "lo" accept$/m)
    assert.match(rules, /^\t\tct state established,related accept$/m)
    assert.match(rules, /icmpv6 type \{ destination-unreachable, packet-too-big/)
    // Outbound stays open: no output chain (the gateway's and the archive's path).
    assert.doesNotMatch(rules, /hook output/)
    assert.doesNotMatch(rules, /dport 22 /)
  })

  it('an IPv4-only fleet has no IPv6 set; exposure.publicSsh admits SSH from everywhere', async () => {
    const v4 = await nftCheck('v4', { operatorCidrs: ['198.51.100.17/32'] })
    assert.doesNotMatch(v4, /operators_v6/)
    assert.match(v4, /^\t\tip saddr @operators_v4 tcp dport 22 accept/m)
    const open = await nftCheck('public', { operatorCidrs: ['198.51.100.17/32'], publicSsh: true })
    assert.match(open, /^\t\ttcp dport 22 accept comment "publicSsh: SSH from everywhere"$/m)
    assert.doesNotMatch(open, /saddr @operators/)
  })

  it('refuses a range or port that is not one with SEED_VALUE_INVALID, never rendering it', () => {
    for (const input of [
      { operatorCidrs: ['203.0.113.0/24 } accept; #'] },
      { operatorCidrs: ['203.0.113.0'] },
      { operatorCidrs: ['10.0.0.0/8'], sshPort: 0 },
    ]) {
      assert.throws(
        () => firstBootGuardScript(input),
        (e: unknown) => e instanceof FleetkitError && e.code === 'SEED_VALUE_INVALID',
        JSON.stringify(input),
      )
    }
  })

  it('is POSIX sh that shellcheck accepts, and ends well whatever a step did', async () => {
    const script = firstBootGuardScript({ operatorCidrs: ['203.0.113.0/24'] })
    const path = join(dir, 'guard.sh')
    await writeFile(path, `#!/bin/sh\n${script}`)
    await runProcessOk('shellcheck', ['-s', 'sh', path])
    assert.match(script, /\ntrue\n$/)
    // The rules file is written only where none exists, so a later boot never undoes the role's rules.
    assert.match(script, /\[ -e \/etc\/fleetkit\/firewall\.nft \] \|\| cat > \/etc\/fleetkit\/firewall\.nft/)
  })

  it("writes the br_netfilter role's own files and values, so the role finds them in place", async () => {
    const role = packagePath('ansible', 'roles', 'br_netfilter')
    const defaults = parse(await readFile(join(role, 'defaults', 'main.yml'), 'utf8')) as Record<string, unknown>
    assert.equal(defaults.br_netfilter_modules_load_file, BR_NETFILTER_MODULES_FILE)
    assert.equal(defaults.br_netfilter_sysctl_file, BR_NETFILTER_SYSCTL_FILE)
    assert.deepEqual(defaults.br_netfilter_sysctls, BR_NETFILTER_SYSCTLS)
    const tasks = await readFile(join(role, 'tasks', 'main.yml'), 'utf8')
    assert.ok(
      tasks.includes(`content: ${JSON.stringify(BR_NETFILTER_MODULES_CONTENT)}`),
      'the role writes the modules-load file the seed writes',
    )
    const firewall = parse(
      await readFile(packagePath('ansible', 'roles', 'firewall', 'defaults', 'main.yml'), 'utf8'),
    ) as Record<string, unknown>
    assert.equal(firewall.firewall_rules_path, '/etc/fleetkit/firewall.nft')
  })
})
