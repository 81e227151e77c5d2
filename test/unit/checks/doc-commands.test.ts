import assert from 'node:assert/strict'

import {
  commandExists,
  commandOf,
  findQuotedCommands,
  quotedFlags,
} from '../../../features/support/rules/doc-commands.js'

describe('quoted fleetkit commands in docs', () => {
  const ids = new Set(['validate', 'node:check', 'release:pack', 'release:sign'])

  it('finds inline spans and fenced lines, but not fleetkit-agent', () => {
    const md =
      'Run `fleetkit validate --json` and `fleetkit-agent enroll`.\n```sh\n$ fleetkit node check web-1\nnpm ci && fleetkit release pack\n```\n'
    const found = findQuotedCommands('x.md', md).map((q) => q.words.join(' '))
    assert.deepEqual(found.sort(), ['node check web-1', 'release pack', 'validate --json'])
  })

  it('takes the longest run of words that is a command and leaves the rest as arguments', () => {
    assert.equal(commandExists(['node', 'check', 'web-1'], ids), true)
    assert.equal(commandExists(['validate', 'examples/fleet.yaml'], ids), true)
    assert.equal(commandExists(['node', 'destroy', 'web-1'], ids), false)
    assert.equal(commandExists(['frobnicate'], ids), false)
  })

  it('accepts a topic that has commands, help, and global flags', () => {
    assert.equal(commandExists(['release'], ids), true)
    assert.equal(commandExists(['help'], ids), true)
    assert.equal(commandExists(['--version'], ids), true)
    assert.equal(commandExists(['db'], ids), false)
  })

  it("reads the flags quoted after a command: usage brackets and values, not a comment's, a pipe's or a $(...)'s", () => {
    assert.deepEqual(quotedFlags(['--limit', 'a,b', '--tags=firewall', '-d', 'fleet.yaml']), [
      '--limit',
      '--tags',
      '-d',
    ])
    assert.deepEqual(quotedFlags(['[--node', 'N]', '[--schedulable', '|', '--no-schedulable]', '[--follow]']), [
      '--node',
      '--schedulable',
      '--no-schedulable',
      '--follow',
    ])
    assert.deepEqual(quotedFlags(['--ref', '$(git', 'rev-parse', '--short', 'HEAD)', '#', 'see', '--full']), ['--ref'])
    assert.deepEqual(quotedFlags(['--json', '|', 'jq', '-r', '.result']), ['--json'])
    assert.deepEqual(quotedFlags(['-', 'NODE', '-1']), [])
  })

  it('names the command the flags belong to, and what follows it', () => {
    assert.deepEqual(commandOf(['release', 'pack', '--version', '1.0.0'], ids), {
      id: 'release:pack',
      rest: ['--version', '1.0.0'],
    })
    assert.equal(commandOf(['release'], ids), undefined)
  })
})
