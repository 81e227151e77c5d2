import assert from 'node:assert/strict'

import { type FlagsOf, givenContextFlags, withContextFlags } from '../../../src/cli/context-flags.js'

const STATE_AND_DEFINITION = { 'state-dir': {}, definition: { char: 'd' }, force: {} }

/** A command line of a few commands: which flags each takes. */
const flagsOf: FlagsOf = (id) =>
  (
    ({
      'db:restore': { 'state-dir': {}, 'pki-dir': {}, force: {} },
      'db:backup': { 'state-dir': {}, out: {} },
      'node:decommission': { 'state-dir': {}, definition: { char: 'd' }, yes: { char: 'y' } },
      runbook: {},
    }) as Record<string, Record<string, { char?: string }>>
  )[id]

describe('context flags carried into an error’s next commands', () => {
  it('finds the context flags given on the command line, in every spelling, the last one winning', () => {
    assert.deepEqual(givenContextFlags(['x.tar.gz', '--state-dir', '/srv/s1', '--force'], STATE_AND_DEFINITION), [
      { name: 'state-dir', value: '/srv/s1' },
    ])
    assert.deepEqual(givenContextFlags(['--state-dir=/a', '-d', 'f.yaml', '--state-dir=/b'], STATE_AND_DEFINITION), [
      { name: 'state-dir', value: '/b' },
      { name: 'definition', char: 'd', value: 'f.yaml' },
    ])
    assert.deepEqual(givenContextFlags(['-df.yaml'], STATE_AND_DEFINITION), [
      { name: 'definition', char: 'd', value: 'f.yaml' },
    ])
    assert.deepEqual(givenContextFlags(['-d=f.yaml'], STATE_AND_DEFINITION), [
      { name: 'definition', char: 'd', value: 'f.yaml' },
    ])
  })

  it('takes nothing the command does not have, nothing after --, and no flag without its value', () => {
    assert.deepEqual(givenContextFlags(['--pki-dir', '/p'], STATE_AND_DEFINITION), [])
    assert.deepEqual(givenContextFlags(['--', '--state-dir', '/s'], STATE_AND_DEFINITION), [])
    assert.deepEqual(givenContextFlags(['--state-dir'], STATE_AND_DEFINITION), [])
  })

  it('adds the state dir to a next command that takes it, after the command’s name', () => {
    const given = [{ name: 'state-dir', value: '/srv/s1' }]
    assert.equal(
      withContextFlags('fleetkit db restore /b/x.tar.gz --force', given, flagsOf),
      'fleetkit db restore --state-dir /srv/s1 /b/x.tar.gz --force',
    )
    assert.equal(
      withContextFlags('fleetkit db backup   (keep what is there first)', given, flagsOf),
      'fleetkit db backup --state-dir /srv/s1   (keep what is there first)',
    )
    // Within a sentence, and for a command whose arguments are lower-case words.
    assert.equal(
      withContextFlags('or stop it for good: fleetkit node decommission app-2 --yes', given, flagsOf),
      'or stop it for good: fleetkit node decommission --state-dir /srv/s1 app-2 --yes',
    )
  })

  it('leaves alone a command that does not take the flag, one that names it already, and help', () => {
    const given = [
      { name: 'state-dir', value: '/srv/s1' },
      { name: 'definition', char: 'd', value: 'fleet.yaml' },
    ]
    assert.equal(
      withContextFlags('fleetkit runbook RESTORE_TARGET_NOT_EMPTY', given, flagsOf),
      'fleetkit runbook RESTORE_TARGET_NOT_EMPTY',
    )
    assert.equal(
      withContextFlags('fleetkit db restore x.tar.gz --state-dir /other', given, flagsOf),
      'fleetkit db restore x.tar.gz --state-dir /other',
    )
    assert.equal(
      withContextFlags('fleetkit node decommission app-2 -d other.yaml --yes', given, flagsOf),
      'fleetkit node decommission --state-dir /srv/s1 app-2 -d other.yaml --yes',
    )
    assert.equal(withContextFlags('fleetkit db restore --help', given, flagsOf), 'fleetkit db restore --help')
    assert.equal(withContextFlags('ps -p 12 -o args', given, flagsOf), 'ps -p 12 -o args')
    // Named in passing, not to be run.
    const prose = 'restore a file written by fleetkit db backup, unchanged'
    assert.equal(withContextFlags(prose, given, flagsOf), prose)
    assert.equal(
      withContextFlags('keep it first (or fleetkit db backup)', given, flagsOf),
      'keep it first (or fleetkit db backup --state-dir /srv/s1)',
    )
  })

  it('quotes a value the shell would split, and adding twice adds once', () => {
    const given = [{ name: 'state-dir', value: "/srv/fleet 'a'" }]
    const once = withContextFlags('fleetkit db backup', given, flagsOf)
    assert.equal(once, `fleetkit db backup --state-dir '/srv/fleet '\\''a'\\'''`)
    assert.equal(withContextFlags(once, given, flagsOf), once)
  })
})
