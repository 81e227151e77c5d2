// The firewall role's check-mode view of its table (filter_plugins/nft_lines.py) run by Python
// itself: the candidate as rendered and the same table as `nft list table` prints it once loaded
// (recorded from nft 1.0.6) make no diff lines; a changed rule does.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

import { packagePath } from '../../../src/package-root.js'

const run = promisify(execFile)

const CANDIDATE = `#!/usr/sbin/nft -f
# Managed by fleetkit
table inet fleetkit {}
delete table inet fleetkit

table inet fleetkit {
\tchain input {
\t\ttype filter hook input priority filter; policy drop;

\t\t# ICMP errors keep path MTU discovery working.
\t\tmeta l4proto icmp icmp type { destination-unreachable, time-exceeded, parameter-problem } accept
\t\tmeta l4proto ipv6-icmp icmpv6 type { destination-unreachable, packet-too-big, nd-router-advert, mld-listener-query } accept
\t\ttcp dport 22 accept comment "SSH"
\t}
}
`

const LISTED = `table inet fleetkit {
\tchain input {
\t\ttype filter hook input priority filter; policy drop;
\t\ticmp type { destination-unreachable, time-exceeded, parameter-problem } accept
\t\ticmpv6 type { destination-unreachable, packet-too-big, mld-listener-query, nd-router-advert } accept
\t\ttcp dport 22 accept comment "SSH"
\t}
}
`

async function lines(ruleset: string): Promise<string> {
  const script = `
import sys
sys.path.insert(0, sys.argv[1])
from nft_lines import FilterModule
sys.stdout.write(FilterModule().filters()['fleetkit_nft_lines'](sys.argv[2]))
`
  const dir = packagePath('ansible', 'roles', 'firewall', 'filter_plugins')
  return (await run('python3', ['-c', script, dir, ruleset])).stdout
}

describe('roles: firewall compares its candidate with the live table as lines', () => {
  it("leaves out what nft does not print and writes what it rewrites nft's way: equal tables are equal", async () => {
    const candidate = await lines(CANDIDATE)
    assert.equal(candidate, await lines(LISTED))
    assert.ok(candidate.startsWith('table inet fleetkit {\nchain input {\n'))
    assert.ok(!candidate.includes('#') && !candidate.includes('delete table'))
  })

  it('keeps a changed rule as a line that differs', async () => {
    const live = await lines(LISTED.replace('tcp dport 22 accept', 'tcp dport 2200 accept'))
    const wanted = await lines(CANDIDATE)
    assert.ok(live.includes('tcp dport 2200 accept comment "SSH"\n'))
    assert.ok(wanted.includes('tcp dport 22 accept comment "SSH"\n'))
    assert.notEqual(live, wanted)
  })
})
