// Property: for a corpus of hostile and odd values put in every string field of a valid
// definition, every value `validate` accepts renders (both seeds and the inventory), so a
// renderer's SEED_VALUE_INVALID is unreachable from a valid definition.
//
// The whole cross product (every value in every field, about 6,000 validations) takes 20 s alone
// and over a minute on a loaded 2-core machine. By default each field gets all the near misses of its
// own value (where grammars disagree) and every STRIPES-th value of the shared hostile corpus, the
// stripe shifting with the field, so every hostile value is still put in many fields;
// FLEETKIT_PROPERTY_FULL=1 runs the whole product (docs/testing.md).
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'

import { loadHostPolicy } from '../../../src/definition/host-policy.js'
import { type GrammarName, isValid } from '../../../src/definition/grammar.js'
import type { Definition } from '../../../src/definition/types.js'
import { validateDefinitionText } from '../../../src/definition/validate-text.js'
import { packagePath } from '../../../src/package-root.js'
import { renderAgentSeed } from '../../../src/render/agent-seed.js'
import { seededRng } from '../../../src/config/rng.js'
import { newEnrollmentSecret } from '../../../src/render/enrollment-secret.js'
import { renderInventory } from '../../../src/render/inventory.js'
import { generateSshHostKey } from '../../../src/render/ssh-host-key.js'
import * as values from '../../../src/render/values.js'
import { renderWorkerSeed } from '../../../src/render/worker-seed.js'
import { validDefinition } from '../../support/definition-fixture.js'

const HOSTILE = [
  '',
  ' ',
  'a b',
  '\n',
  'x\ny',
  'x\r\ny',
  'x\u0000y',
  '\t',
  '"',
  "'",
  '`id`',
  '$(id)',
  '${HOME}',
  ';reboot',
  '&&',
  '|',
  '-',
  '--',
  '-oProxyCommand=sh',
  '..',
  '../..',
  '/..',
  '/../etc',
  '//',
  '~',
  '#',
  '?',
  '%00',
  '%0a',
  '\\',
  '<>',
  '{{x}}',
  'é',
  'Ω',
  'ａ',
  '\u202e',
  '\ufeff',
  '😀',
  'x'.repeat(64),
  'x'.repeat(300),
  'a'.repeat(5000),
  '0',
  '1.2.3',
  '1.2.3+build',
  '1.2.3-',
  '1.2.3-rc.1',
  'root',
  'ROOT',
  '_',
  'a-',
  '-a',
  'a..b',
  'a.b.',
  '.a',
  '::1',
  '::',
  ':::',
  '1:2:3',
  'fd00::1',
  '256.1.1.1',
  '10.0.0.1',
  '999.1.1.1',
  '1.2.3.4/33',
  'fd00::/129',
  'https://',
  'https://a',
  'https://a:0',
  'https://a:65536',
  'https://1.2.3.999',
  'https://a/..',
  'https://a?x=1',
  'https://user:pw@a',
  'https://a#x',
  'http://a',
  'https://a b',
  'https://a/$(id)',
  'https://xn--e1afmkfd.xn--p1ai',
  '/dev/../etc/shadow',
  '/dev/sdb\n',
  '/srv/data',
  '/srv/./data',
  '/',
  '/srv/',
  'C:\\x',
  'ssh-ed25519 AAAA',
  'ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIPdRl3VEfS8Ir661qc0rFEACHmzWcHU6RE3gIZhMM3sS',
]

/** Odd variants of a field's own valid value: near misses are where grammars disagree. */
function variants(original: string): string[] {
  return [
    original,
    `${original}\n`,
    `${original} `,
    ` ${original}`,
    `-${original}`,
    `${original}$(id)`,
    `${original}/..`,
    `${original}/../x`,
    `${original}:99999`,
    `${original}-`,
    `${original}.`,
    original.toUpperCase(),
    `${original}é`,
    `${original} comment with spaces`,
    `${original} a@b`,
    `${original}=`,
    original.slice(0, -1),
    `${original}+x`,
  ]
}

type Mutable = Record<string, unknown>

/** Pointers of every string value, and of every pool name (a mapping key that is a value too). */
function stringFields(value: unknown, path = ''): string[] {
  if (typeof value === 'string') return [path]
  if (Array.isArray(value)) return value.flatMap((v, i) => stringFields(v, `${path}/${i}`))
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => stringFields(v, `${path}/${k}`))
  return []
}

function setAt(root: Mutable, path: string, value: string): void {
  const segments = path.slice(1).split('/')
  const parent = segments.slice(0, -1).reduce<Mutable>((o, k) => o[k] as Mutable, root)
  parent[segments.at(-1)!] = value
}

/** The valid fixture with every optional string field filled, so each is put under test. */
function richDefinition(): Definition {
  const d = validDefinition()
  d.providers = {
    hetzner: { tokenEnv: 'HETZNER_API_TOKEN', sshKeys: ['ops-key'], endpoint: 'https://api.hetzner.cloud/v1' },
  }
  d.features = { containers: true, session: 'headless', preset: 'ci-runner' }
  d.pools.build!.regions = ['fsn1', 'nbg1']
  d.nodes[0]!.region = 'fsn1'
  d.nodes[0]!.serverType = 'cx32'
  d.nodes[0]!.dataVolume = { device: '/dev/sdb', filesystem: 'xfs', mountPoint: '/srv/build' }
  d.nodes[0]!.ssh!.port = 2222
  d.nodes[1]!.hostKey =
    'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG2Q22lHQ13gZYC5FVnWPStE92sbGmybChHe5Pl573we db-1@fleet.internal'
  return d
}

const CA = readFileSync(packagePath('test', 'fixtures', 'cloud-init', 'gateway-ca-bundle.pem'), 'utf8')
const HOST_KEY = generateSshHostKey('property', seededRng('grammar-property'))
const SECRET = newEnrollmentSecret(seededRng('grammar-property')).secret

/** Everything the pure renderers make of a definition: each node's agent and worker seed, and the inventory. */
function renderAll(definition: Definition): void {
  for (const node of definition.nodes) {
    renderAgentSeed({
      nodeId: node.id,
      gatewayUrl: definition.gateway.url,
      enrollUrl: definition.gateway.enrollUrl,
      caBundlePem: CA,
      releaseUrl: definition.release.url,
      releasePublicKey: definition.release.publicKey,
      releaseVersion: definition.release.version,
      enrollmentSecret: SECRET,
      dataMount: node.dataVolume?.mountPoint,
      account: node.ssh?.user
        ? { user: node.ssh.user, sshPort: node.ssh.port, operatorKeys: definition.operators.sshKeys, hostKey: HOST_KEY }
        : undefined,
      guard: { operatorCidrs: definition.operators.cidrs, sshPort: node.ssh?.port, publicSsh: true },
    })
    renderWorkerSeed({
      nodeId: node.id,
      user: node.ssh?.user ?? 'fleetkit',
      operatorKeys: definition.operators.sshKeys,
      hostKey: HOST_KEY,
      guard: { operatorCidrs: definition.operators.cidrs },
      autoinstall: true,
    })
  }
  renderInventory({ definition, stateNodes: [], hostPolicy: {}, knownHostsPath: '/srv/fleetkit/known_hosts' })
}

const STRIPES = process.env.FLEETKIT_PROPERTY_FULL === '1' ? 1 : 4

describe('property: what validate accepts renders (one grammar per value)', function () {
  this.timeout(300_000)
  const policy = loadHostPolicy()

  it('the rich base definition is valid and renders', () => {
    const base = richDefinition()
    assert.deepEqual(validateDefinitionText(JSON.stringify(base), 'fleet.json', { policy }).errors, [])
    renderAll(base)
  })

  it('every hostile or odd value in every string field: validate refuses it, or every renderer accepts it', () => {
    const baseText = JSON.stringify(richDefinition())
    const fields = stringFields(JSON.parse(baseText))
    assert.ok(fields.length >= 30, `only ${fields.length} string fields`)
    let accepted = 0
    let refused = 0
    const failures: string[] = []
    const tried = new Set<string>()
    for (const [fieldIndex, field] of fields.entries()) {
      const original = String(
        field
          .slice(1)
          .split('/')
          .reduce<unknown>((o, k) => (o as Mutable)[k], JSON.parse(baseText)),
      )
      const corpus = [...HOSTILE, ...variants(original)]
      for (const [valueIndex, value] of corpus.entries()) {
        // The field's own near misses always; the shared hostile corpus one stripe of it per field.
        if (valueIndex < HOSTILE.length && (fieldIndex + valueIndex) % STRIPES !== 0) continue
        if (valueIndex < HOSTILE.length) tried.add(value)
        const d = JSON.parse(baseText) as Mutable
        setAt(d, field, value)
        const { definition, errors } = validateDefinitionText(JSON.stringify(d), 'fleet.json', { policy })
        if (errors.length > 0 || !definition) {
          refused++
          continue
        }
        accepted++
        try {
          renderAll(definition)
        } catch (error) {
          failures.push(
            `${field} = ${JSON.stringify(value).slice(0, 80)}: validate accepted it, rendering threw ${(error as { code?: string }).code ?? ''} ${(error as Error).message}`,
          )
        }
      }
    }
    assert.deepEqual(failures, [])
    // Not vacuous: both sides of the property were exercised, and the stripes left no value or variant out.
    assert.ok(accepted > 100 / STRIPES && refused > 1000 / STRIPES, `accepted ${accepted}, refused ${refused}`)
    assert.equal(tried.size, new Set(HOSTILE).size, 'a hostile value was never tried')
  })

  it("the renderers' value checks and the grammar agree on the whole corpus", () => {
    const pairs: Array<[GrammarName, (field: string, v: unknown) => unknown]> = [
      ['httpsUrl', values.httpsUrlValue],
      ['releaseVersion', values.versionValue],
      ['mountPoint', values.absolutePathValue],
      ['sshPublicKey', values.sshPublicKeyValue],
      ['sshHost', values.hostNameValue],
      ['posixUser', (f, v) => values.posixUserValue(f, v, { allowRoot: true })],
    ]
    const corpus = [
      ...HOSTILE,
      ...HOSTILE.flatMap(variants),
      ...variants('https://gateway.fleet.internal:8443'),
      ...variants('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPdRl3VEfS8Ir661qc0rFEACHmzWcHU6RE3gIZhMM3sS'),
    ]
    for (const [name, check] of pairs) {
      for (const value of corpus) {
        let renders = true
        try {
          check('field', value)
        } catch (error) {
          assert.equal((error as { code?: string }).code, 'SEED_VALUE_INVALID')
          renders = false
        }
        assert.equal(renders, isValid(name, value), `${name} ${JSON.stringify(value).slice(0, 80)}`)
      }
    }
  })
})
