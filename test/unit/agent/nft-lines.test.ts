// The agent's copy of the firewall role's normalisation gives the lines the role's Python filter gives
// (run by python3 itself), and the line difference host:firewall reports counts and names lines in order.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

import { lineDifference, nftLines } from '../../../src/agent/nft-lines.js'
import { packagePath } from '../../../src/package-root.js'

const run = promisify(execFile)

async function pythonLines(ruleset: string): Promise<string> {
  const script = `
import sys
sys.path.insert(0, sys.argv[1])
from nft_lines import fleetkit_nft_lines
sys.stdout.write(fleetkit_nft_lines(sys.argv[2]))
`
  const dir = packagePath('ansible', 'roles', 'firewall', 'filter_plugins')
  return (await run('python3', ['-c', script, dir, ruleset])).stdout
}

const RULESETS = [
  `#!/usr/sbin/nft -f
# comment
table inet fleetkit {}
delete table inet fleetkit

table inet fleetkit {
\tset operators_v4 {
\t\ttype ipv4_addr
\t\tflags interval
\t\telements = { 203.0.113.0/24, 192.0.2.7 }
\t}
\tchain input {
\t\ttype filter hook input priority filter; policy drop;
\t\tmeta l4proto icmp icmp type { time-exceeded, destination-unreachable } accept
\t\tmeta l4proto ipv6-icmp icmpv6 type { nd-router-advert, mld-listener-query, Zeta, alpha } accept
\t\tip saddr @operators_v4 tcp dport 22 accept comment "SSH from the operator CIDRs"
\t}
}
`,
  'table inet fleetkit {\r\n  chain forward {\r\n    oifname "br-*" ct original proto-dst { 443, 80, 8443 } accept\r\n  }\r\n}\r\n',
  '',
]

describe('agent: nft table lines', () => {
  it("normalises as the role's fleetkit_nft_lines filter does", async () => {
    for (const ruleset of RULESETS) {
      const ours = nftLines(ruleset)
      assert.equal(ours.map((line) => `${line}\n`).join(''), await pythonLines(ruleset))
    }
  })

  it('counts the lines only one side has and names the first in table order', () => {
    const wanted = ['table inet fleetkit {', 'chain input {', 'a', 'b', 'c', '}', '}']
    assert.deepEqual(lineDifference(wanted, wanted), { count: 0, first: undefined })
    assert.deepEqual(lineDifference(wanted, ['table inet fleetkit {', 'chain input {', 'a', 'x', 'b', 'c', '}', '}']), {
      count: 1,
      first: '+ x',
    })
    assert.deepEqual(lineDifference(wanted, ['table inet fleetkit {', 'chain input {', 'a', 'c', '}', '}']), {
      count: 1,
      first: '- b',
    })
    assert.deepEqual(lineDifference(wanted, ['table inet fleetkit {', 'chain input {', 'a', 'B', 'c', '}', '}']), {
      count: 2,
      first: '+ B',
    })
    assert.deepEqual(lineDifference(wanted, []), { count: 7, first: '- table inet fleetkit {' })
    assert.deepEqual(lineDifference([], ['x']), { count: 1, first: '+ x' })
  })
})
