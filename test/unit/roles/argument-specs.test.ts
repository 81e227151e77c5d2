// Every role's meta/argument_specs.yml documents each input with the default its defaults/main.yml
// really gives it, or marks it required (test/support/role-argument-specs.ts has the rule and why).
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'

import { parse } from 'yaml'

import { packagePath } from '../../../src/package-root.js'
import { type ArgumentSpecsFile, argumentSpecViolations } from '../../support/role-argument-specs.js'

const roles = readdirSync(packagePath('ansible', 'roles'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort()

function readYaml(role: string, ...path: string[]): unknown {
  return parse(readFileSync(packagePath('ansible', 'roles', role, ...path), 'utf8'))
}

describe('roles: argument specs agree with defaults/main.yml', () => {
  it('finds the roles', () => {
    assert.ok(roles.length >= 10, `only ${roles.join(', ')} under ansible/roles`)
  })

  for (const role of roles) {
    it(`${role}: every option has its default from defaults/main.yml or is required, and every default is an option`, () => {
      const specs = readYaml(role, 'meta', 'argument_specs.yml') as ArgumentSpecsFile
      const defaults = readYaml(role, 'defaults', 'main.yml') as Record<string, unknown> | null
      assert.deepEqual(argumentSpecViolations(role, specs, defaults), [])
    })
  }

  describe('the rule fails what it should', () => {
    const defaults = { demo_port: 22, demo_name: 'x' }
    const spec = (options: Record<string, Record<string, unknown>>): ArgumentSpecsFile => ({
      argument_specs: { main: { options } },
    })

    it('holds for a spec that documents every default', () => {
      const specs = spec({ demo_port: { type: 'int', default: 22 }, demo_name: { type: 'str', default: 'x' } })
      assert.deepEqual(argumentSpecViolations('demo', specs, defaults), [])
    })

    it('reports an option with neither a default nor required', () => {
      const specs = spec({ demo_port: { type: 'int' }, demo_name: { type: 'str', default: 'x' } })
      assert.deepEqual(argumentSpecViolations('demo', specs, defaults), [
        'demo:main.demo_port: has neither a default nor required: true',
      ])
    })

    it('reports a suboption with neither', () => {
      const specs = spec({
        demo_port: { type: 'int', default: 22 },
        demo_name: { type: 'str', default: 'x' },
        demo_list: { type: 'list', required: true, options: { base: { type: 'str' } } },
      })
      assert.deepEqual(argumentSpecViolations('demo', specs, defaults), [
        'demo:main.demo_list.base: has neither a default nor required: true',
      ])
    })

    it('reports a default that differs from defaults/main.yml, or is not there', () => {
      const specs = spec({
        demo_port: { type: 'int', default: 2222 },
        demo_name: { type: 'str', default: 'x' },
        demo_extra: { type: 'str', default: '' },
      })
      assert.deepEqual(argumentSpecViolations('demo', specs, defaults), [
        "demo:main.demo_port: the spec's default 2222 differs from defaults/main.yml's 22",
        "demo:main.demo_extra: the spec's default is not in defaults/main.yml (Ansible applies only that file)",
      ])
    })

    it('reports a required option that defaults/main.yml fills in', () => {
      const specs = spec({ demo_port: { type: 'int', required: true }, demo_name: { type: 'str', default: 'x' } })
      assert.deepEqual(argumentSpecViolations('demo', specs, defaults), [
        'demo:main.demo_port: is required but defaults/main.yml gives it a value, so required never fails',
      ])
    })

    it('reports a variable of defaults/main.yml that no entry point names', () => {
      const specs = spec({ demo_port: { type: 'int', default: 22 } })
      assert.deepEqual(argumentSpecViolations('demo', specs, defaults), [
        "demo: defaults/main.yml's demo_name is no option of any entry point",
      ])
    })
  })
})
