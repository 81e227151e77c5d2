// The transition commands are built by one factory (src/cli/transition-command.ts): each must still
// be an oclif command class with its own summary, NODE, its flags before --state-dir and --json.
import assert from 'node:assert/strict'

import NodeAdmit from '../../../src/commands/node/admit.js'
import NodeDrain from '../../../src/commands/node/drain.js'
import NodePark from '../../../src/commands/node/park.js'
import NodeUndrain from '../../../src/commands/node/undrain.js'
import NodeUnpark from '../../../src/commands/node/unpark.js'

describe('cli: transition commands', () => {
  const commands = { NodeAdmit, NodeDrain, NodePark, NodeUndrain, NodeUnpark }

  it('each is a class of its own with its summary, examples, NODE, --state-dir and --json', () => {
    const summaries = new Set<string | undefined>()
    for (const [name, command] of Object.entries(commands)) {
      assert.ok(command.summary && command.summary.length > 20, `${name}: a summary`)
      summaries.add(command.summary)
      assert.ok((command.examples?.length ?? 0) >= 2, `${name}: its examples`)
      assert.deepEqual(Object.keys(command.args ?? {}), ['node'], `${name}: NODE`)
      assert.ok(command.args?.node?.required, `${name}: NODE is required`)
      assert.ok(command.flags?.['state-dir'], `${name}: --state-dir`)
      assert.equal(command.enableJsonFlag, true, `${name}: --json`)
    }
    assert.equal(summaries.size, Object.keys(commands).length, 'no two share their statics')
  })

  it('their own flags come first, then --state-dir, as their help lists them', () => {
    assert.deepEqual(Object.keys(NodeAdmit.flags ?? {}), ['definition', 'accept-warn', 'state-dir'])
    assert.deepEqual(Object.keys(NodeDrain.flags ?? {}), ['wait', 'state-dir'])
    assert.deepEqual(Object.keys(NodePark.flags ?? {}), ['state-dir'])
    assert.equal(NodeUndrain.description?.startsWith('The way back from node drain.'), true)
    assert.equal(NodePark.description, undefined)
  })
})
