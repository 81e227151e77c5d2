#!/usr/bin/env node
// The installed `fleetkit` entry: runs the compiled commands in dist/.
import { execute } from '@oclif/core'

await execute({ dir: import.meta.url })
