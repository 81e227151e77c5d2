// The Hetzner Cloud API client provisioning uses: servers, server types, locations, images, SSH
// keys, firewalls, placement groups, volumes and actions; every list followed through its pages (hetzner-pages.ts).
import { setTimeout as delay } from 'node:timers/promises'

import { FleetkitError, isFleetkitError } from '../checks/fleetkit-error.js'
import { type Clock, systemClock } from '../config/clock.js'
import { type Rng, systemRng } from '../config/rng.js'
import type { Logger } from '../log/logger.js'
import { type ApiToken, apiTokenFromEnv } from './api-token.js'
import { pollActions } from './hetzner-actions.js'
import { HetznerTransport } from './hetzner-transport.js'
import { listAll, post } from './hetzner-pages.js'
import type {
  Action,
  CreateServerRequest,
  CreateServerResult,
  CreateVolumeRequest,
  CreateVolumeResult,
  Firewall,
  FirewallResource,
  FirewallRule,
  Image,
  Labels,
  Location,
  PlacementGroup,
  Server,
  ServerType,
  SshKey,
  Volume,
} from './hetzner-types.js'
import { memoryRateBudget, type RateBudget } from './rate-budget.js'

/** The label every fleetkit server carries: how a create whose answer was lost is found again. */
const NODE_ID_LABEL = 'fleetkit.node_id'

export interface HetznerClientOptions {
  /** The environment the token is read from (process.env by default). */
  env?: NodeJS.ProcessEnv
  /** The variable holding the token: HETZNER_API_TOKEN, or the definition's tokenEnv. */
  tokenEnv?: string
  baseUrl?: string
  /** Shared by every process of the project when it comes from the store; one process's otherwise. */
  budget?: RateBudget
  fetch?: typeof fetch
  clock?: Clock
  sleep?: (ms: number) => Promise<void>
  rng?: Rng
  requestTimeoutMs?: number
  maxRateWaitMs?: number
  log?: Logger
}

export interface ListFilter {
  labelSelector?: string
  name?: string
}

export class HetznerClient {
  private readonly transport: HetznerTransport
  private readonly sleep: (ms: number) => Promise<void>

  constructor(options: HetznerClientOptions = {}, token?: ApiToken) {
    this.sleep = options.sleep ?? ((ms) => delay(ms))
    this.transport = new HetznerTransport({
      token: token ?? apiTokenFromEnv(options.env ?? process.env, options.tokenEnv),
      budget: options.budget ?? memoryRateBudget(),
      clock: options.clock ?? systemClock,
      sleep: this.sleep,
      rng: options.rng ?? systemRng,
      ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
      ...(options.maxRateWaitMs === undefined ? {} : { maxRateWaitMs: options.maxRateWaitMs }),
      ...(options.log === undefined ? {} : { log: options.log }),
    })
  }

  // Servers

  listServers(filter: ListFilter & { status?: string } = {}): Promise<Server[]> {
    return listAll<Server>(this.transport, '/servers', 'servers', {
      label_selector: filter.labelSelector,
      name: filter.name,
      status: filter.status,
    })
  }

  /** The server, or undefined when it does not exist (404). */
  async getServer(id: number): Promise<Server | undefined> {
    const body = await this.transport.call<{ server: Server }>('GET', `/servers/${id}`, { idempotent: true }, true)
    return body?.server
  }

  /**
   * Creates a server, sent once. After an ambiguous failure (5xx, timeout, broken connection) the
   * server may exist: it is looked up by its fleetkit.node_id label and adopted if found, else the
   * failure is thrown. A uniqueness_error on the name adopts the holder only when it carries our label.
   */
  async createServer(request: CreateServerRequest): Promise<CreateServerResult> {
    const nodeId = request.labels[NODE_ID_LABEL]
    if (!nodeId) {
      throw new FleetkitError(
        'INTERNAL_ERROR',
        `createServer needs the ${NODE_ID_LABEL} label to recover a lost answer`,
      )
    }
    try {
      const body = await this.transport.call<{ server: Server; action: Action; next_actions: Action[] }>(
        'POST',
        '/servers',
        { body: request, idempotent: false },
      )
      if (!body) throw new FleetkitError('PROVIDER_ERROR', 'Hetzner Cloud answered POST /servers without a body')
      return { server: body.server, action: body.action, next_actions: body.next_actions ?? [], adopted: false }
    } catch (error) {
      if (!isFleetkitError(error)) throw error
      const ambiguous = error.code === 'PROVIDER_UNAVAILABLE' && error.data?.ambiguous === true
      if (!ambiguous && error.code !== 'PROVIDER_NAME_CONFLICT') throw error
      const found = await this.serverOfNode(nodeId, request.name)
      if (found) return { server: found, next_actions: [], adopted: true }
      throw error
    }
  }

  /** The server carrying fleetkit.node_id=`nodeId` (and, when given, that name). */
  private async serverOfNode(nodeId: string, name?: string): Promise<Server | undefined> {
    const servers = await this.listServers({ labelSelector: `${NODE_ID_LABEL}=${nodeId}` })
    return servers.find((server) => name === undefined || server.name === name)
  }

  /** Deletes a server; undefined when it was already gone (404), so running it again is safe. */
  async deleteServer(id: number): Promise<Action | undefined> {
    const body = await this.transport.call<{ action: Action }>('DELETE', `/servers/${id}`, { idempotent: true }, true)
    return body?.action
  }

  // Volumes

  listVolumes(filter: ListFilter = {}): Promise<Volume[]> {
    return listAll<Volume>(this.transport, '/volumes', 'volumes', {
      label_selector: filter.labelSelector,
      name: filter.name,
    })
  }

  /** The volume, or undefined when it does not exist (404). */
  async getVolume(id: number): Promise<Volume | undefined> {
    const body = await this.transport.call<{ volume: Volume }>('GET', `/volumes/${id}`, { idempotent: true }, true)
    return body?.volume
  }

  /**
   * Creates a volume, sent once. As for a server: after an ambiguous failure, or a uniqueness_error
   * on its name, the volume carrying its fleetkit.node_id label (and that name) is adopted if found.
   */
  async createVolume(request: CreateVolumeRequest): Promise<CreateVolumeResult> {
    const nodeId = request.labels[NODE_ID_LABEL]
    if (!nodeId) {
      throw new FleetkitError(
        'INTERNAL_ERROR',
        `createVolume needs the ${NODE_ID_LABEL} label to recover a lost answer`,
      )
    }
    try {
      const body = await post<{ volume: Volume; action: Action; next_actions?: Action[] }>(
        this.transport,
        '/volumes',
        request,
        false,
      )
      return { volume: body.volume, action: body.action, next_actions: body.next_actions ?? [], adopted: false }
    } catch (error) {
      if (!isFleetkitError(error)) throw error
      const ambiguous = error.code === 'PROVIDER_UNAVAILABLE' && error.data?.ambiguous === true
      if (!ambiguous && error.code !== 'PROVIDER_NAME_CONFLICT') throw error
      const [found] = (await this.listVolumes({ labelSelector: `${NODE_ID_LABEL}=${nodeId}` })).filter(
        (volume) => volume.name === request.name,
      )
      if (found) return { volume: found, next_actions: [], adopted: true }
      throw error
    }
  }

  /** Attaches a detached volume to a server in its location (`automount` false: the data_volume role mounts it). */
  async attachVolume(id: number, serverId: number, automount = false): Promise<Action> {
    const path = `/volumes/${id}/actions/attach`
    return (await post<{ action: Action }>(this.transport, path, { server: serverId, automount }, false)).action
  }

  async detachVolume(id: number): Promise<Action> {
    return (await post<{ action: Action }>(this.transport, `/volumes/${id}/actions/detach`, {}, false)).action
  }

  /** Deletes a detached volume (204); a volume already gone (404) counts as deleted, so running it again is safe. */
  async deleteVolume(id: number): Promise<void> {
    await this.transport.call<unknown>('DELETE', `/volumes/${id}`, { idempotent: true }, true)
  }

  // Catalogue

  listServerTypes(filter: { name?: string } = {}): Promise<ServerType[]> {
    return listAll<ServerType>(this.transport, '/server_types', 'server_types', { name: filter.name })
  }

  listLocations(filter: { name?: string } = {}): Promise<Location[]> {
    return listAll<Location>(this.transport, '/locations', 'locations', { name: filter.name })
  }

  listImages(filter: ListFilter & { type?: string; architecture?: 'x86' | 'arm' } = {}): Promise<Image[]> {
    return listAll<Image>(this.transport, '/images', 'images', {
      label_selector: filter.labelSelector,
      name: filter.name,
      type: filter.type,
      architecture: filter.architecture,
    })
  }

  // SSH keys

  listSshKeys(filter: ListFilter = {}): Promise<SshKey[]> {
    return listAll<SshKey>(this.transport, '/ssh_keys', 'ssh_keys', {
      label_selector: filter.labelSelector,
      name: filter.name,
    })
  }

  async createSshKey(request: { name: string; public_key: string; labels?: Labels }): Promise<SshKey> {
    return (await post<{ ssh_key: SshKey }>(this.transport, '/ssh_keys', request, false)).ssh_key
  }

  // Firewalls

  listFirewalls(filter: ListFilter = {}): Promise<Firewall[]> {
    return listAll<Firewall>(this.transport, '/firewalls', 'firewalls', {
      label_selector: filter.labelSelector,
      name: filter.name,
    })
  }

  async createFirewall(request: {
    name: string
    labels?: Labels
    rules?: FirewallRule[]
    apply_to?: FirewallResource[]
  }): Promise<{ firewall: Firewall; actions: Action[] }> {
    const body = await post<{ firewall: Firewall; actions?: Action[] }>(this.transport, '/firewalls', request, false)
    return { firewall: body.firewall, actions: body.actions ?? [] }
  }

  /** Replaces every rule with `rules` (the whole desired set): the same call twice is the same firewall. */
  async setFirewallRules(id: number, rules: FirewallRule[]): Promise<Action[]> {
    return (await post<{ actions: Action[] }>(this.transport, `/firewalls/${id}/actions/set_rules`, { rules }, true))
      .actions
  }

  async applyFirewall(id: number, applyTo: FirewallResource[]): Promise<Action[]> {
    const path = `/firewalls/${id}/actions/apply_to_resources`
    return (await post<{ actions: Action[] }>(this.transport, path, { apply_to: applyTo }, false)).actions
  }

  // Placement groups

  listPlacementGroups(filter: ListFilter = {}): Promise<PlacementGroup[]> {
    return listAll<PlacementGroup>(this.transport, '/placement_groups', 'placement_groups', {
      label_selector: filter.labelSelector,
      name: filter.name,
    })
  }

  async createPlacementGroup(request: { name: string; labels?: Labels }): Promise<PlacementGroup> {
    const body = { ...request, type: 'spread' }
    return (await post<{ placement_group: PlacementGroup }>(this.transport, '/placement_groups', body, false))
      .placement_group
  }

  // Actions

  /** The actions with these IDs, asked in batches (`GET /actions?id=1&id=2`), never one call each. */
  async getActions(ids: readonly number[]): Promise<Action[]> {
    const actions: Action[] = []
    for (let i = 0; i < ids.length; i += ACTIONS_PER_CALL) {
      const batch = ids.slice(i, i + ACTIONS_PER_CALL)
      actions.push(...(await listAll<Action>(this.transport, '/actions', 'actions', { id: batch })))
    }
    return actions
  }

  /**
   * Polls until every action finished, all of them in one call per round; PROVIDER_ACTION_FAILED
   * names the first that ended in error. `onProgress` hears each round.
   */
  waitForActions(
    ids: readonly number[],
    options: { pollMs?: number; signal?: AbortSignal; onProgress?: (running: number) => void } = {},
  ): Promise<Action[]> {
    return pollActions((batch) => this.getActions(batch), this.sleep, ids, options)
  }
}

const ACTIONS_PER_CALL = 25 // as hcloud-go asks: a query string every proxy accepts
