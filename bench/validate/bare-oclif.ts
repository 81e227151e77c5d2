// A minimal oclif CLI beside fleetkit, for scale: one command that prints a word, built from the
// same @oclif/core (its node_modules is a link to fleetkit's) and shipped the way fleetkit is, with
// an oclif manifest. Its start is what any oclif command costs before it does anything.
import { execFileSync } from 'node:child_process'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { packagePath } from '../../src/package-root.js'

const COMMAND = `import { Command } from '@oclif/core'

export default class Hello extends Command {
  static summary = 'Say hello.'

  async run() {
    this.log('hello')
  }
}
`

const ENTRY = `#!/usr/bin/env node
import { execute } from '@oclif/core'

await execute({ dir: import.meta.url })
`

/** Writes the CLI under `dir` and returns its entry; `node ENTRY hello` runs its one command. */
export function createBareOclifCli(dir: string): string {
  mkdirSync(join(dir, 'bin'), { recursive: true })
  mkdirSync(join(dir, 'commands'), { recursive: true })
  symlinkSync(packagePath('node_modules'), join(dir, 'node_modules'), 'dir')
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: 'bare', version: '1.0.0', type: 'module', files: ['bin', 'commands'], oclif: { bin: 'bare', dirname: 'bare', commands: './commands' } }, null, 2)}\n`,
  )
  writeFileSync(join(dir, 'commands', 'hello.js'), COMMAND)
  const entry = join(dir, 'bin', 'run.js')
  writeFileSync(entry, ENTRY)
  execFileSync(process.execPath, [packagePath('node_modules', 'oclif', 'bin', 'run.js'), 'manifest'], {
    cwd: dir,
    stdio: 'ignore',
  })
  return entry
}
