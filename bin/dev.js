#!/usr/bin/env node
// Runs `fleetkit` straight from src/ (TypeScript through tsx), for development and tests:
// commands come from src/commands and any oclif.manifest.json a build left is ignored,
// so what runs is always the source as it is now.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { register } from 'tsx/esm/api'

register()
const { execute, Plugin } = await import('@oclif/core')

const root = fileURLToPath(new URL('..', import.meta.url))
const pjson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
pjson.oclif.commands = './src/commands'
// Hooks and the help class too come from source: ./dist/cli/hooks/x.js is ./src/cli/hooks/x.ts.
const fromSource = (target) => target.replace(/^\.\/dist\//, './src/').replace(/\.js$/, '.ts')
for (const [event, target] of Object.entries(pjson.oclif.hooks ?? {})) {
  pjson.oclif.hooks[event] = fromSource(target)
}
if (typeof pjson.oclif.helpClass === 'string') pjson.oclif.helpClass = fromSource(pjson.oclif.helpClass)

// Plugins handed to oclif ready-made: the only way to make it ignore the root's manifest.
const plugins = new Map()
const fleetkit = new Plugin({ root, pjson, isRoot: true, ignoreManifest: true, enableAutoTranspile: false })
await fleetkit.load()
plugins.set(fleetkit.name, fleetkit)
for (const name of pjson.oclif.plugins ?? []) {
  const plugin = new Plugin({ root: join(root, 'node_modules', name), type: 'core', name })
  await plugin.load()
  plugins.set(plugin.name, plugin)
}

await execute({ development: true, loadOptions: { root, pjson, plugins } })
