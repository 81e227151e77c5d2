// The local Hetzner Cloud stub's resources and routes, without HTTP: servers, catalogue, SSH keys,
// firewalls, placement groups, volumes and actions that finish after a delay on the injected clock.
// Every answer carries each field hcloud-go's schema structs name (stub-resources.ts).
import type { Clock } from '../config/clock.js'
import type { Action, Labels } from './hetzner-types.js'
import { STUB_DATACENTERS, STUB_IMAGES, STUB_LOCATIONS, STUB_SERVER_TYPES } from './stub-catalogue.js'
import { apiError, invalidInput, type StubResponse, uniquenessError } from './stub-errors.js'
import { listPage } from './stub-list.js'
import { applyFirewall, createFirewall, setFirewallRules } from './stub-firewalls.js'
import type {
  StubDatacenter,
  StubFirewall,
  StubPlacementGroup,
  StubServer,
  StubSshKey,
  StubVolume,
} from './stub-resources.js'
import type { StubMachines } from './stub-machines.js'
import { powerServer } from './stub-server-actions.js'
import { attachVolume, createVolume, deleteVolume, detachVolume, detachVolumesOf } from './stub-volumes.js'

export interface StubRequest {
  method: string
  /** Below the API root: `/servers/1`. */
  path: string
  query: URLSearchParams
  body: unknown
}

/** The API's limit on user_data. */
const USER_DATA_MAX_BYTES = 32_768
/** A server's monthly traffic allowance in bytes (20 TB), as the API reports it. */
const INCLUDED_TRAFFIC = 21_990_232_555_520
const NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i

interface PendingAction {
  action: Action
  finishesAtMs: number
  onFinish?: () => void
  /** The machines' work (--boot): the action finishes only once it has, and in error when it failed. */
  work?: { settled: boolean; error?: string }
}

export class StubApi {
  readonly servers = new Map<number, StubServer>()
  readonly sshKeys = new Map<number, StubSshKey>()
  readonly firewalls = new Map<number, StubFirewall>()
  readonly placementGroups = new Map<number, StubPlacementGroup>()
  readonly volumes = new Map<number, StubVolume>()
  readonly actions = new Map<number, PendingAction>()
  /** Project limits (resource_limit_exceeded past them). */
  quota = { servers: 100 }
  /** `type@location` pairs that answer resource_unavailable (a sold-out type). */
  readonly unavailable = new Set<string>()
  /**
   * IDs are never reused at the API; a stub's resources live as long as it does while the state that recorded
   * their IDs outlives it, so each start numbers from its clock (milliseconds since 2026), never from where an
   * earlier run began: a decommission of a node of an earlier run can never name a server of this one by ID.
   */
  private nextId: number
  /** Primary IPs are a resource of their own at the API, numbered apart from the rest. */
  private nextPrimaryIpId = 40_000_000

  constructor(
    private readonly clock: Clock,
    private readonly actionDurationMs: number,
    /** Real machines behind the API (`provider stub --boot`); none by default. */
    readonly machines?: StubMachines,
  ) {
    this.nextId = Math.max(1000, clock.now().getTime() - Date.UTC(2026, 0, 1))
  }

  handle(request: StubRequest): StubResponse {
    this.finishDueActions()
    const segments = request.path.split('/').filter((s) => s !== '')
    const [collection, idText, sub, verb] = segments
    const id = idText === undefined ? undefined : Number(idText)
    const route = `${request.method} /${collection ?? ''}${idText === undefined ? '' : '/{id}'}${sub ? `/${sub}` : ''}${verb ? `/${verb}` : ''}`
    if (id !== undefined && !Number.isInteger(id)) return apiError(404, 'not_found', 'not found')
    switch (route) {
      case 'GET /servers':
        return listPage(request.query, 'servers', [...this.servers.values()], (s) => filterByStatus(s, request.query))
      case 'POST /servers':
        return this.createServer(request.body)
      case 'GET /servers/{id}':
        return this.one('server', this.servers.get(id!))
      case 'DELETE /servers/{id}':
        return this.deleteServer(id!)
      case 'GET /server_types':
        return listPage(request.query, 'server_types', STUB_SERVER_TYPES)
      case 'GET /server_types/{id}':
        return this.one(
          'server_type',
          STUB_SERVER_TYPES.find((t) => t.id === id),
        )
      case 'GET /locations':
        return listPage(request.query, 'locations', STUB_LOCATIONS)
      case 'GET /locations/{id}':
        return this.one(
          'location',
          STUB_LOCATIONS.find((l) => l.id === id),
        )
      case 'GET /datacenters':
        return listPage(request.query, 'datacenters', this.datacenters())
      case 'GET /datacenters/{id}':
        return this.one(
          'datacenter',
          this.datacenters().find((d) => d.id === id),
        )
      case 'GET /images':
        return listPage(request.query, 'images', STUB_IMAGES, (image) =>
          ['type', 'architecture'].every((key) => {
            const wanted = request.query.get(key)
            return wanted === null || (image as unknown as Record<string, unknown>)[key] === wanted
          }),
        )
      case 'GET /images/{id}':
        return this.one(
          'image',
          STUB_IMAGES.find((i) => i.id === id),
        )
      case 'GET /ssh_keys':
        return listPage(request.query, 'ssh_keys', [...this.sshKeys.values()])
      case 'GET /ssh_keys/{id}':
        return this.one('ssh_key', this.sshKeys.get(id!))
      case 'POST /ssh_keys':
        return this.createSshKey(request.body)
      case 'GET /firewalls':
        return listPage(request.query, 'firewalls', [...this.firewalls.values()])
      case 'GET /firewalls/{id}':
        return this.one('firewall', this.firewalls.get(id!))
      case 'POST /firewalls':
        return createFirewall(this, request.body)
      case 'POST /firewalls/{id}/actions/set_rules':
        return setFirewallRules(this, id!, request.body)
      case 'POST /firewalls/{id}/actions/apply_to_resources':
        return applyFirewall(this, id!, request.body)
      case 'GET /placement_groups':
        return listPage(request.query, 'placement_groups', [...this.placementGroups.values()])
      case 'GET /placement_groups/{id}':
        return this.one('placement_group', this.placementGroups.get(id!))
      case 'POST /placement_groups':
        return this.createPlacementGroup(request.body)
      case 'GET /volumes':
        return listPage(request.query, 'volumes', [...this.volumes.values()], (v) => filterByStatus(v, request.query))
      case 'POST /volumes':
        return createVolume(this, request.body)
      case 'GET /volumes/{id}':
        return this.one('volume', this.volumes.get(id!))
      case 'DELETE /volumes/{id}':
        return deleteVolume(this, id!)
      case 'POST /volumes/{id}/actions/attach':
        return attachVolume(this, id!, request.body)
      case 'POST /volumes/{id}/actions/detach':
        return detachVolume(this, id!)
      case 'POST /servers/{id}/actions/poweron':
      case 'POST /servers/{id}/actions/poweroff':
      case 'POST /servers/{id}/actions/shutdown':
      case 'POST /servers/{id}/actions/reboot':
      case 'POST /servers/{id}/actions/reset':
        return powerServer(this, id!, verb as 'poweron' | 'poweroff' | 'shutdown' | 'reboot' | 'reset')
      case 'GET /actions': {
        const ids = request.query.getAll('id').map(Number)
        const actions = [...this.actions.values()].map((p) => p.action)
        return listPage(request.query, 'actions', actions, (a) => ids.length === 0 || ids.includes(a.id))
      }
      case 'GET /actions/{id}':
        return this.one('action', this.actions.get(id!)?.action)
      default:
        return apiError(404, 'not_found', `no route ${request.method} ${request.path}`)
    }
  }

  /** Finishes every action whose delay has passed on the clock: its status, then its effect. */
  finishDueActions(): void {
    const now = this.clock.now().getTime()
    for (const pending of this.actions.values()) {
      if (pending.action.status !== 'running' || pending.finishesAtMs > now) continue
      if (pending.work && !pending.work.settled) continue
      pending.action.finished = new Date(Math.max(now, pending.finishesAtMs)).toISOString()
      if (pending.work?.error !== undefined) {
        pending.action.status = 'error'
        pending.action.error = { code: 'action_failed', message: pending.work.error }
        continue
      }
      pending.action.status = 'success'
      pending.action.progress = 100
      if (!pending.work) pending.action.finished = new Date(pending.finishesAtMs).toISOString()
      pending.onFinish?.()
    }
  }

  newId(): number {
    return this.nextId++
  }

  busy(type: string, id: number): boolean {
    return [...this.actions.values()].some(
      (p) => p.action.status === 'running' && p.action.resources.some((r) => r.type === type && r.id === id),
    )
  }

  nowIso(): string {
    return this.clock.now().toISOString()
  }

  /** An action that finishes after the delay, and after WORK (the machines' part, --boot) when there is one. */
  action(
    command: string,
    resources: { id: number; type: string }[],
    onFinish?: () => void,
    work?: Promise<void>,
  ): Action {
    const now = this.clock.now().getTime()
    const action: Action = {
      id: this.newId(),
      command,
      status: 'running',
      progress: 0,
      started: new Date(now).toISOString(),
      finished: null,
      resources,
      error: null,
    }
    const pending: PendingAction = {
      action,
      finishesAtMs: now + this.actionDurationMs,
      ...(onFinish ? { onFinish } : {}),
    }
    if (work) {
      const state: { settled: boolean; error?: string } = { settled: false }
      pending.work = state
      work.then(
        () => (state.settled = true),
        (error: unknown) => {
          state.error = error instanceof Error ? error.message : String(error)
          state.settled = true
        },
      )
    }
    this.actions.set(action.id, pending)
    return action
  }

  /** The datacenters, with the types sold out there (`unavailable`) left out of `available`. */
  private datacenters(): StubDatacenter[] {
    return STUB_DATACENTERS.map((dc) => {
      const available = dc.server_types.supported.filter((typeId) => {
        const type = STUB_SERVER_TYPES.find((t) => t.id === typeId)
        return !this.unavailable.has(`${type?.name}@${dc.location.name}`)
      })
      return { ...dc, server_types: { ...dc.server_types, available } }
    })
  }

  private one(key: string, item: unknown): StubResponse {
    return item === undefined ? apiError(404, 'not_found', `${key} not found`) : { status: 200, body: { [key]: item } }
  }

  private createServer(input: unknown): StubResponse {
    const body = (input ?? {}) as Record<string, unknown>
    if (typeof body.name !== 'string' || !NAME.test(body.name))
      return invalidInput('name', 'name must be a valid hostname')
    const type = STUB_SERVER_TYPES.find((t) => t.name === body.server_type || t.id === body.server_type)
    if (!type) return invalidInput('server_type', 'server type not found')
    const image = STUB_IMAGES.find(
      (i) => (i.name === body.image || i.id === body.image) && i.architecture === type.architecture,
    )
    if (!image) return invalidInput('image', 'image not found for the architecture of the server type')
    if (this.machines && (image.architecture !== 'x86' || !this.machines.bootsImage(image.name ?? '')))
      return invalidInput('image', `the local cloud boots only x86 Debian images, not ${image.name}`)
    const location = STUB_LOCATIONS.find((l) => l.name === (body.location ?? 'fsn1'))
    if (!location) return invalidInput('location', 'location not found')
    if (typeof body.user_data === 'string' && Buffer.byteLength(body.user_data) > USER_DATA_MAX_BYTES) {
      return invalidInput('user_data', `user_data must not be longer than ${USER_DATA_MAX_BYTES} bytes`)
    }
    const labels = (body.labels ?? {}) as Labels
    if (typeof labels !== 'object' || Object.keys(labels).some((k) => k.startsWith('hetzner.cloud/'))) {
      return invalidInput('labels', 'labels are invalid')
    }
    const sshKeys = (Array.isArray(body.ssh_keys) ? body.ssh_keys : []) as unknown[]
    for (const key of sshKeys) {
      if (![...this.sshKeys.values()].some((k) => k.id === key || k.name === key))
        return invalidInput('ssh_keys', 'SSH key not found')
    }
    const firewallIds = (Array.isArray(body.firewalls) ? body.firewalls : []) as { firewall?: unknown }[]
    const firewalls: StubFirewall[] = []
    for (const f of firewallIds) {
      const firewall = this.firewalls.get(Number(f.firewall))
      if (!firewall) return invalidInput('firewalls', 'firewall not found')
      firewalls.push(firewall)
    }
    const placement =
      body.placement_group === undefined ? undefined : this.placementGroups.get(Number(body.placement_group))
    if (body.placement_group !== undefined && !placement)
      return invalidInput('placement_group', 'placement group not found')
    if ([...this.servers.values()].some((s) => s.name === body.name)) {
      return uniquenessError('server')
    }
    if (this.servers.size >= this.quota.servers) {
      return apiError(403, 'resource_limit_exceeded', 'server limit exceeded', { limits: [{ name: 'server_limit' }] })
    }
    if (
      this.unavailable.has(`${type.name}@${location.name}`) ||
      !type.locations?.some((l) => l.name === location.name)
    ) {
      return apiError(412, 'resource_unavailable', 'error during placement')
    }
    const id = this.newId()
    const n = this.servers.size + 1
    // A booted machine's address on the stub's bridge; else 198.18.0.0/15 (benchmarking): never a real host's.
    const machine = this.machines?.createServer({
      id,
      name: body.name,
      image: image.name ?? '',
      ...(typeof body.user_data === 'string' ? { userData: body.user_data } : {}),
      sshKeys: sshKeys.map((key) => [...this.sshKeys.values()].find((k) => k.id === key || k.name === key)!.public_key),
      volumes: [],
    })
    const ipv4 = machine?.ipv4 ?? `198.18.${(id >> 8) & 255}.${id & 255}`
    const server: StubServer = {
      id,
      name: body.name,
      status: 'initializing',
      created: this.clock.now().toISOString(),
      labels: { ...labels },
      server_type: type,
      datacenter: STUB_DATACENTERS.find((dc) => dc.location.name === location.name)!,
      image,
      public_net: {
        ipv4: {
          id: this.nextPrimaryIpId++,
          ip: ipv4,
          blocked: false,
          dns_ptr: `static.${ipv4.split('.').reverse().join('.')}.clients.your-server.de`,
        },
        ipv6: { id: this.nextPrimaryIpId++, ip: `2001:db8:${n.toString(16)}::/64`, blocked: false, dns_ptr: [] },
        floating_ips: [],
        firewalls: firewalls.map((f) => ({ id: f.id, status: 'applied' })),
      },
      private_net: [],
      included_traffic: INCLUDED_TRAFFIC,
      outgoing_traffic: 0,
      ingoing_traffic: 0,
      backup_window: null,
      rescue_enabled: false,
      iso: null,
      locked: false,
      protection: { delete: false, rebuild: false },
      volumes: [],
      primary_disk_size: type.disk,
      placement_group: placement ?? null,
    }
    this.servers.set(id, server)
    placement?.servers.push(id)
    for (const firewall of firewalls) firewall.applied_to.push({ type: 'server', server: { id } })
    const resources = [{ id, type: 'server' }]
    const action = this.action(
      'create_server',
      resources,
      () => {
        if (this.servers.get(id)?.status === 'initializing') server.status = 'running'
      },
      machine?.booted,
    )
    const start = this.action('start_server', resources, undefined, machine?.booted)
    return {
      status: 201,
      body: { server, action, next_actions: [start], root_password: sshKeys.length > 0 ? null : 'stub-root-password' },
    }
  }

  private deleteServer(id: number): StubResponse {
    const server = this.servers.get(id)
    if (!server) return apiError(404, 'not_found', 'server not found')
    this.servers.delete(id)
    // The machine goes with its volumes detached (they stay, as the API's do).
    const stopped = this.machines?.deleteServer(id)
    detachVolumesOf(this, id)
    for (const group of this.placementGroups.values()) group.servers = group.servers.filter((s) => s !== id)
    for (const firewall of this.firewalls.values()) {
      firewall.applied_to = firewall.applied_to.filter((r) => r.type !== 'server' || r.server.id !== id)
    }
    return { status: 200, body: { action: this.action('delete_server', [{ id, type: 'server' }], undefined, stopped) } }
  }

  private createSshKey(input: unknown): StubResponse {
    const body = (input ?? {}) as Record<string, unknown>
    if (typeof body.name !== 'string' || body.name === '') return invalidInput('name', 'name is required')
    if (typeof body.public_key !== 'string' || !/^ssh-\S+ \S+/.test(body.public_key)) {
      return invalidInput('public_key', 'public key is invalid')
    }
    const keys = [...this.sshKeys.values()]
    if (keys.some((k) => k.name === body.name)) return uniquenessError('SSH key')
    if (keys.some((k) => k.public_key === body.public_key)) {
      return uniquenessError('SSH key', 'public_key')
    }
    const id = this.newId()
    const key: StubSshKey = {
      id,
      name: body.name,
      fingerprint: `stub:${id.toString(16).padStart(2, '0')}`,
      public_key: body.public_key,
      labels: (body.labels ?? {}) as Labels,
      created: this.nowIso(),
    }
    this.sshKeys.set(id, key)
    return { status: 201, body: { ssh_key: key } }
  }

  private createPlacementGroup(input: unknown): StubResponse {
    const body = (input ?? {}) as Record<string, unknown>
    if (typeof body.name !== 'string' || body.name === '') return invalidInput('name', 'name is required')
    if (body.type !== 'spread') return invalidInput('type', "type must be 'spread'")
    if ([...this.placementGroups.values()].some((g) => g.name === body.name)) {
      return uniquenessError('placement group')
    }
    const group: StubPlacementGroup = {
      id: this.newId(),
      name: body.name,
      labels: (body.labels ?? {}) as Labels,
      created: this.nowIso(),
      type: 'spread',
      servers: [],
    }
    this.placementGroups.set(group.id, group)
    // The API creates a placement group at once: its answer's action is null.
    return { status: 201, body: { placement_group: group, action: null } }
  }
}

function filterByStatus(item: { status: string }, query: URLSearchParams): boolean {
  const statuses = query.getAll('status')
  return statuses.length === 0 || statuses.includes(item.status)
}
