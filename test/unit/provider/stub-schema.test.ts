// The Hetzner stub's answers against hcloud-go's schema structs (test/support/hcloud-schema.ts), field
// by field: every resource it serves carries every field the API's own clients read, in its JSON type.
// The transcription itself is compared with the Go source of Debian's package (scripts/install-test-deps).
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

import { fixedClock } from '../../../src/config/clock.js'
import { type HetznerStub, startHetznerStub } from '../../../src/provider/hetzner-stub.js'
import {
  ANSWERS,
  ErrorDetailsInvalidInput,
  Firewall,
  type Shape,
  shapeProblems,
  type Struct,
} from '../../support/hcloud-schema.js'

const SCHEMA_DIR = '/usr/share/gocode/src/github.com/hetznercloud/hcloud-go/hcloud/schema'

describe('provider: the Hetzner stub answers as hcloud-go’s schema structs', () => {
  const clock = fixedClock(new Date('2026-03-01T12:00:00Z'))
  let stub: HetznerStub

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON read field by field; the checker checks its shape
  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const response = await fetch(`${stub.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${stub.token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) }
  }

  /** Calls the route and asserts its answer has every field of `answer`, in its type. */
  async function check(answer: Struct, method: string, path: string, body?: unknown) {
    const result = await call(method, path, body)
    assert.ok(result.status < 300, `${method} ${path}: ${result.status} ${JSON.stringify(result.body)}`)
    assert.deepEqual(shapeProblems(result.body, answer), [], `${method} ${path} as ${answer.go}`)
    return result.body
  }

  beforeEach(async () => {
    stub = await startHetznerStub({ clock, actionDurationMs: 1000 })
  })
  afterEach(async () => {
    await stub.close()
  })

  it('the catalogue: server types, images, locations, datacenters, listed and one by one', async () => {
    const types = await check(ANSWERS.ServerTypeListResponse, 'GET', '/server_types')
    await check(ANSWERS.ServerTypeGetResponse, 'GET', `/server_types/${types.server_types[0].id}`)
    const images = await check(ANSWERS.ImageListResponse, 'GET', '/images?type=system')
    await check(ANSWERS.ImageGetResponse, 'GET', `/images/${images.images[0].id}`)
    const locations = await check(ANSWERS.LocationListResponse, 'GET', '/locations')
    await check(ANSWERS.LocationGetResponse, 'GET', `/locations/${locations.locations[0].id}`)
    const datacenters = await check(ANSWERS.DatacenterListResponse, 'GET', '/datacenters')
    const fsn1 = await check(ANSWERS.DatacenterGetResponse, 'GET', `/datacenters/${datacenters.datacenters[0].id}`)
    assert.equal(fsn1.datacenter.location.name, 'fsn1')
    assert.ok(fsn1.datacenter.server_types.available.includes(types.server_types[0].id))
    stub.api.unavailable.add(`${types.server_types[0].name}@fsn1`)
    const soldOut = await check(ANSWERS.DatacenterGetResponse, 'GET', `/datacenters/${fsn1.datacenter.id}`)
    assert.ok(!soldOut.datacenter.server_types.available.includes(types.server_types[0].id), 'sold out: not available')
  })

  it('what a provisioning run creates: SSH key, placement group, firewall, server, volume, their actions', async () => {
    const key = await check(ANSWERS.SSHKeyCreateResponse, 'POST', '/ssh_keys', {
      name: 'ops',
      public_key: 'ssh-ed25519 AAAA ops',
    })
    await check(ANSWERS.SSHKeyListResponse, 'GET', '/ssh_keys')
    await check(ANSWERS.SSHKeyGetResponse, 'GET', `/ssh_keys/${key.ssh_key.id}`)

    const group = await check(ANSWERS.PlacementGroupCreateResponse, 'POST', '/placement_groups', {
      name: 'spread-build',
      type: 'spread',
    })
    assert.equal(group.action, null, 'a placement group is made at once')

    // A rule as fleetkit sends it: no destination_ips; the API answers every field.
    const firewall = await check(ANSWERS.FirewallCreateResponse, 'POST', '/firewalls', {
      name: 'fleetkit-build',
      rules: [
        { direction: 'in', protocol: 'tcp', port: '22', source_ips: ['192.0.2.0/24'] },
        { direction: 'in', protocol: 'icmp', source_ips: ['0.0.0.0/0'] },
      ],
    })
    assert.deepEqual(firewall.firewall.rules[1], {
      direction: 'in',
      source_ips: ['0.0.0.0/0'],
      destination_ips: [],
      protocol: 'icmp',
      port: null,
      description: null,
    })

    const created = await check(ANSWERS.ServerCreateResponse, 'POST', '/servers', {
      name: 'build-01',
      server_type: 'cx22',
      image: 'debian-12',
      location: 'fsn1',
      ssh_keys: ['ops'],
      labels: { 'fleetkit.node_id': 'build-01' },
      firewalls: [{ firewall: firewall.firewall.id }],
      placement_group: group.placement_group.id,
    })
    const id = created.server.id
    assert.equal(created.server.public_net.ipv4.blocked, false)
    assert.deepEqual(created.server.public_net.firewalls, [{ id: firewall.firewall.id, status: 'applied' }])
    const applied = await check(ANSWERS.FirewallGetResponse, 'GET', `/firewalls/${firewall.firewall.id}`)
    assert.deepEqual(applied.firewall.applied_to, [{ type: 'server', server: { id } }])

    await check(
      ANSWERS.FirewallActionSetRulesResponse,
      'POST',
      `/firewalls/${firewall.firewall.id}/actions/set_rules`,
      {
        rules: [{ direction: 'out', protocol: 'udp', port: '53', destination_ips: ['198.51.100.1/32'] }],
      },
    )
    await check(
      ANSWERS.FirewallActionApplyToResourcesResponse,
      'POST',
      `/firewalls/${firewall.firewall.id}/actions/apply_to_resources`,
      { apply_to: [{ type: 'label_selector', label_selector: { selector: 'fleetkit.pool=build' } }] },
    )
    await check(ANSWERS.FirewallListResponse, 'GET', '/firewalls')
    await check(ANSWERS.PlacementGroupListResponse, 'GET', '/placement_groups')
    await check(ANSWERS.PlacementGroupGetResponse, 'GET', `/placement_groups/${group.placement_group.id}`)

    const volume = await check(ANSWERS.VolumeCreateResponse, 'POST', '/volumes', {
      name: 'build-01-data',
      size: 10,
      location: 'fsn1',
      labels: { 'fleetkit.node_id': 'build-01' },
      format: 'xfs',
    })
    clock.advance(1000)
    await check(ANSWERS.VolumeActionAttachVolumeResponse, 'POST', `/volumes/${volume.volume.id}/actions/attach`, {
      server: id,
    })
    clock.advance(1000)
    const running = await check(ANSWERS.ServerGetResponse, 'GET', `/servers/${id}`)
    assert.equal(running.server.status, 'running')
    assert.deepEqual(running.server.volumes, [volume.volume.id], 'the attached volume, on the server too')
    await check(ANSWERS.ServerListResponse, 'GET', '/servers?label_selector=fleetkit.node_id%3Dbuild-01')
    await check(ANSWERS.VolumeGetResponse, 'GET', `/volumes/${volume.volume.id}`)
    await check(ANSWERS.VolumeListResponse, 'GET', '/volumes')
    await check(ANSWERS.VolumeActionDetachVolumeResponse, 'POST', `/volumes/${volume.volume.id}/actions/detach`)

    const actions = await check(ANSWERS.ActionListResponse, 'GET', `/actions?id=${created.action.id}`)
    assert.equal(actions.actions[0].status, 'success')
    await check(ANSWERS.ActionGetResponse, 'GET', `/actions/${created.next_actions[0].id}`)
    await check(ANSWERS.ServerDeleteResponse, 'DELETE', `/servers/${id}`)
    const after = await check(ANSWERS.FirewallGetResponse, 'GET', `/firewalls/${firewall.firewall.id}`)
    assert.ok(!after.firewall.applied_to.some((r: { type: string }) => r.type === 'server'), 'a deleted server')
  })

  it('errors: the API’s body, invalid_input with its fields', async () => {
    const missing = await call('GET', '/servers/4242')
    assert.equal(missing.status, 404)
    assert.deepEqual(shapeProblems(missing.body, ANSWERS.ErrorResponse), [])
    const invalid = await call('POST', '/ssh_keys', { name: 'x', public_key: 'not a key' })
    assert.equal(invalid.status, 422)
    assert.deepEqual(shapeProblems(invalid.body, ANSWERS.ErrorResponse), [])
    assert.deepEqual(shapeProblems(invalid.body.error.details, ErrorDetailsInvalidInput), [])
  })

  it('the checker names a missing field, a mistyped one and a null the struct does not allow', async () => {
    const { body } = await call('POST', '/servers', {
      name: 'a',
      server_type: 'cx22',
      image: 'debian-12',
      labels: { 'fleetkit.node_id': 'a' },
    })
    assert.deepEqual(shapeProblems(body, ANSWERS.ServerCreateResponse), [])
    delete body.server.public_net.ipv4.id
    body.server.public_net.ipv4.blocked = 'no'
    body.server.datacenter = null
    body.server.image.created = 'yesterday'
    body.server.unknown_field = 1 // fields beyond hcloud-go's are allowed
    assert.deepEqual(shapeProblems(body, ANSWERS.ServerCreateResponse), [
      '$.server.public_net.ipv4.id: missing (ServerPublicNetIPv4)',
      '$.server.public_net.ipv4.blocked: a boolean expected, got string',
      '$.server.datacenter: an object (Datacenter) expected, got null',
      '$.server.image.created: an RFC 3339 time expected, got string',
    ])
    const rule = { direction: 'in', source_ips: [], protocol: 'tcp', port: 22, description: null }
    assert.deepEqual(shapeProblems({ rules: [rule] }, Firewall), [
      '$.id: missing (Firewall)',
      '$.name: missing (Firewall)',
      '$.labels: missing (Firewall)',
      '$.created: missing (Firewall)',
      '$.rules[0].destination_ips: missing (FirewallRule)',
      '$.rules[0].port: a string expected, got number',
      '$.applied_to: missing (Firewall)',
    ])
  })

  it('the transcription names the Go structs’ fields, no more and no fewer', () => {
    // Never skipped: without the Go source there is nothing to compare with, which is a failure.
    assert.ok(
      existsSync(SCHEMA_DIR),
      `${SCHEMA_DIR} is missing: scripts/install-test-deps installs golang-github-hetznercloud-hcloud-go-dev`,
    )
    const seen = new Set<Struct>()
    const problems: string[] = []
    const visit = (shape: Shape): void => {
      if (typeof shape !== 'object') return
      if ('nullable' in shape) return visit(shape.nullable)
      if ('optional' in shape) return visit(shape.optional)
      if ('array' in shape) return visit(shape.array)
      if (seen.has(shape)) return
      seen.add(shape)
      Object.values(shape.fields).forEach(visit)
      if (shape.go === 'inline') return
      const go = goJsonFields(readFileSync(join(SCHEMA_DIR, shape.file), 'utf8'), shape.go)
      if (!go) return void problems.push(`${shape.go}: no such struct in ${shape.file}`)
      const ours = Object.keys(shape.fields).filter((k) => !(k === 'meta' && shape.go.endsWith('ListResponse')))
      for (const field of go) if (!ours.includes(field)) problems.push(`${shape.go}.${field}: not transcribed`)
      for (const field of ours) if (!go.includes(field)) problems.push(`${shape.go}.${field}: not in ${shape.file}`)
    }
    Object.values(ANSWERS).forEach(visit)
    visit(ErrorDetailsInvalidInput)
    assert.deepEqual(problems, [])
    assert.ok(seen.size > 30, `${seen.size} structs compared`)
  })
})

/** The JSON names of a Go struct's own fields (an inline struct's tag counts, not its fields). */
function goJsonFields(source: string, name: string): string[] | undefined {
  const lines = source.split('\n')
  const start = lines.findIndex((line) => line.startsWith(`type ${name} struct {`))
  if (start < 0) return undefined
  const fields: string[] = []
  let depth = 1
  for (const line of lines.slice(start + 1)) {
    const before = depth
    depth += (line.match(/{/g)?.length ?? 0) - (line.match(/}/g)?.length ?? 0)
    if (depth === 0) break
    const tag = /json:"([^",]+)/.exec(line)?.[1]
    if (depth === 1 && before <= 2 && tag && tag !== '-') fields.push(tag)
  }
  return fields
}
