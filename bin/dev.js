#!/usr/bin/env node
// Runs `fleetkit` straight from src/ (TypeScript through tsx), for development and tests:
// the commands directory points at src/commands, so no build or manifest is involved.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

import { register } from 'tsx/esm/api'

register()
const { execute } = await import('@oclif/core')

const root = fileURLToPath(new URL('..', import.meta.url))
const pjson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
pjson.oclif.commands = './src/commands'

await execute({ development: true, loadOptions: { root, pjson, enableAutoTranspile: false } })
