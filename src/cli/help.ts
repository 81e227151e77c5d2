// fleetkit's help (package.json oclif.helpClass): oclif's own, except that a text with no ejs tag is
// printed as it is instead of compiled by ejs (a new Function per string, which gives the same text
// back). The root help renders every command's summary, and ejs was about 5% of `fleetkit --help`.
import { Help, type Interfaces } from '@oclif/core'

export default class FleetkitHelp extends Help {
  constructor(config: Interfaces.Config, options: Partial<Interfaces.HelpOptions> = {}) {
    super(config, options)
    const render = this.render
    this.render = (text) => (text.includes('<%') || text.includes('%>') ? render(text) : text)
  }
}
