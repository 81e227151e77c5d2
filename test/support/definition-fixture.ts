// Test helper: a fresh, valid Definition (test/fixtures/definitions/valid.yaml) that a test
// may change freely, and the real host policy.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

import { load } from 'js-yaml'

import { loadHostPolicy } from '../../src/definition/host-policy.js'
import type { RuleContext } from '../../src/definition/rules/rule.js'
import type { Definition } from '../../src/definition/types.js'
import { packagePath } from '../../src/package-root.js'

export const FIXTURES = packagePath('test', 'fixtures', 'definitions')

export function fixturePath(name: string): string {
  return join(FIXTURES, name)
}

export function fixtureText(name: string): string {
  return readFileSync(fixturePath(name), 'utf8')
}

export function validDefinition(): Definition {
  return load(fixtureText('valid.yaml')) as Definition
}

export function ruleContext(definition: Definition): RuleContext {
  return { definition, policy: loadHostPolicy() }
}
