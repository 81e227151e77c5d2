// Generates fleet-validator.generated.ts: schema/fleet.schema.json compiled by ajv ahead of
// time (standalone code), so `fleetkit validate` neither loads ajv nor compiles at start-up.
// Regenerate after a schema change: npx tsx scripts/generate-fleet-validator.ts
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import standaloneCode from 'ajv/dist/standalone/index.js'

import { packagePath } from '../src/package-root.js'

export const FLEET_SCHEMA_PATH = packagePath('schema', 'fleet.schema.json')
export const GENERATED_VALIDATOR_PATH = packagePath('src', 'definition', 'fleet-validator.generated.ts')

const HEADER = [
  '/* eslint-disable */',
  '// @ts-nocheck',
  '// GENERATED from schema/fleet.schema.json by scripts/generate-fleet-validator.ts: do not edit.',
  '// Regenerate: npx tsx scripts/generate-fleet-validator.ts (a unit test fails when it is stale).',
  "import { createRequire } from 'node:module'",
  'const require = createRequire(import.meta.url)',
  '',
].join('\n')

export function generateFleetValidatorSource(schemaText = readFileSync(FLEET_SCHEMA_PATH, 'utf8')): string {
  // verbose: errors carry the offending data and the parent schema (for "allowed fields").
  const ajv = new Ajv2020.default({
    allErrors: true,
    verbose: true,
    strict: true,
    code: { source: true, esm: true, lines: true },
  })
  addFormats.default(ajv, ['uri'])
  const validate = ajv.compile(JSON.parse(schemaText) as object)
  return `${HEADER}${standaloneCode.default(ajv, validate).replace(/^"use strict";/, '')}\n`
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(GENERATED_VALIDATOR_PATH, generateFleetValidatorSource())
  console.log(`wrote ${GENERATED_VALIDATOR_PATH}`)
}
