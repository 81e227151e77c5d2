import assert from 'node:assert/strict'

import { Help, type Interfaces } from '@oclif/core'

import FleetkitHelp from '../../../src/cli/help.js'

describe("fleetkit's help class", () => {
  const config = { bin: 'fleetkit', topicSeparator: ' ' } as unknown as Interfaces.Config
  const help = new FleetkitHelp(config)
  const oclifHelp = new Help(config)

  it("prints a text without an ejs tag as it is, as oclif's ejs render does", () => {
    for (const text of [
      'Validate a fleet definition: schema, semantic rules and, with --since, the change itself.',
      'Reports every error at once, one line each: CODE /json/pointer (line:column): message. 100% <b>',
      'two\nlines with "quotes", \\backslashes\\ and a tab\t',
      '',
    ]) {
      assert.equal(help.render(text), text)
      assert.equal(oclifHelp.render(text), text)
    }
  })

  it('still renders a template through ejs', () => {
    assert.equal(
      help.render('<%= config.bin %> validate --definition fleet.yaml'),
      'fleetkit validate --definition fleet.yaml',
    )
    for (const text of ['<%= config.bin %> db status', 'an unclosed <% tag', 'a stray %> close'])
      assert.equal(
        attempt(() => help.render(text)),
        attempt(() => oclifHelp.render(text)),
        text,
      )
  })
})

function attempt(render: () => string): string {
  try {
    return render()
  } catch (error) {
    return `threw ${(error as Error).name}`
  }
}
