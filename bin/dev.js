#!/usr/bin/env -S node --import tsx --no-warnings
// Runs `fleetkit` straight from src/ (TypeScript through tsx), for development.
import { execute } from '@oclif/core'

await execute({ development: true, dir: import.meta.url })
