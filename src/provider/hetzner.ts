// The Hetzner Cloud API client provisioning uses: servers, server types, locations, images, SSH
// keys, firewalls, placement groups, volumes and actions; every list followed through its pages (hetzner-pages.ts).
// It implements the Provider interface (provider.ts) the lifecycle code takes.
import { setTimeout as delay } from 'node:timers/promises'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { type Clock, systemClock } from '../config/clock.js'
import { type Rng, systemRng } from '../config/rng.js'
import type { Logger } from '../log/logger.js'
import { type ApiToken, apiTokenFromEnv } from './api-token.js'
import { type AdoptableKind, createOrAdopt, findOwn } from './create-or-adopt.js'
import { pollActions } from './hetzner-actions.js'
import { HetznerTransport } from './hetzner-transport.js'
import { callFor, listAll, post } from './hetzner-pages.js'
import {
  type Answer,
  isResourceId,
  listOf,
  readAction,
  readFirewall,
  readImage,
  readKey,
  readLocation,
  readPlacementGroup,
  readServer,
  readServerType,
  readSshKey,
  readVolume,
} from './hetzner-readers.js'
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
import type { ListFilter, Provider } from './provider.js'
import { memoryRateBudget, type RateBudget } from './rate-budget.js'

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

export class HetznerClient implements Provider {
  private readonly transport: HetznerTransport
  private readonly sleep: (ms: number) => Promise<void>
  private readonly serverKind: AdoptableKind<Server> = { kind: 'server', list: (filter) => this.listServers(filter) }
  private readonly volumeKind: AdoptableKind<Volume> = { kind: 'volume', list: (filter) => this.listVolumes(filter) }

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
    return listAll(this.transport, '/servers', 'servers', readServer, {
      label_selector: filter.labelSelector,
      name: filter.name,
      status: filter.status,
    })
  }

  /** The server, or undefined when it does not exist (404). */
  async getServer(id: number): Promise<Server | undefined> {
    return callFor(this.transport, 'GET', idPath('servers', id), { idempotent: true }, 'server', readServer, true)
  }

  /**
   * Creates a server, sent once (create-or-adopt.ts): after an ambiguous failure (a lost answer, or one
   * without a usable server) the server carrying the node's labels is adopted if found; after a
   * uniqueness_error the holder of the name is adopted only when it carries them (a concurrent run's),
   * else PROVIDER_NAME_CONFLICT names it.
   */
  createServer(request: CreateServerRequest): Promise<CreateServerResult> {
    return createOrAdopt<Server, CreateServerResult>(
      this.serverKind,
      request,
      async () => {
        const body = await this.transport.call('POST', '/servers', { body: request, idempotent: false })
        const answer: Answer = { method: 'POST', path: '/servers', ambiguous: true }
        return {
          server: readKey(body, answer, 'server', readServer),
          action: readKey(body, answer, 'action', readAction),
          next_actions: readKey(body, answer, 'next_actions', optionalActions),
          adopted: false,
        }
      },
      (server) => ({ server, next_actions: [], adopted: true }),
    )
  }

  /**
   * The node's server before a create: found by its labels, or holding its name with them. Undefined
   * when no server has the name; PROVIDER_NAME_CONFLICT when one without the node's labels has it.
   */
  findOwnServer(name: string, labels: Labels): Promise<Server | undefined> {
    return findOwn(this.serverKind, { name, labels })
  }

  /** Deletes a server; undefined when it was already gone (404), so running it again is safe. */
  async deleteServer(id: number): Promise<Action | undefined> {
    return callFor(this.transport, 'DELETE', idPath('servers', id), { idempotent: true }, 'action', readAction, true)
  }

  // Volumes

  listVolumes(filter: ListFilter = {}): Promise<Volume[]> {
    return listAll(this.transport, '/volumes', 'volumes', readVolume, {
      label_selector: filter.labelSelector,
      name: filter.name,
    })
  }

  /** The volume, or undefined when it does not exist (404). */
  async getVolume(id: number): Promise<Volume | undefined> {
    return callFor(this.transport, 'GET', idPath('volumes', id), { idempotent: true }, 'volume', readVolume, true)
  }

  /** Creates a volume, sent once; a lost answer or a name conflict is resolved as for a server. */
  createVolume(request: CreateVolumeRequest): Promise<CreateVolumeResult> {
    return createOrAdopt<Volume, CreateVolumeResult>(
      this.volumeKind,
      request,
      async () => {
        const body = await this.transport.call('POST', '/volumes', { body: request, idempotent: false })
        const answer: Answer = { method: 'POST', path: '/volumes', ambiguous: true }
        return {
          volume: readKey(body, answer, 'volume', readVolume),
          action: readKey(body, answer, 'action', readAction),
          next_actions: readKey(body, answer, 'next_actions', optionalActions),
          adopted: false,
        }
      },
      (volume) => ({ volume, next_actions: [], adopted: true }),
    )
  }

  /** The node's volume before a create, as `findOwnServer` finds its server. */
  findOwnVolume(name: string, labels: Labels): Promise<Volume | undefined> {
    return findOwn(this.volumeKind, { name, labels })
  }

  /** Attaches a detached volume to a server in its location (`automount` false: the data_volume role mounts it). */
  async attachVolume(id: number, serverId: number, automount = false): Promise<Action> {
    const body = { server: idOf(serverId), automount }
    return post(this.transport, idPath('volumes', id, '/actions/attach'), body, false, 'action', readAction)
  }

  async detachVolume(id: number): Promise<Action> {
    return post(this.transport, idPath('volumes', id, '/actions/detach'), {}, false, 'action', readAction)
  }

  /** Deletes a detached volume (204); a volume already gone (404) counts as deleted, so running it again is safe. */
  async deleteVolume(id: number): Promise<void> {
    await this.transport.call('DELETE', idPath('volumes', id), { idempotent: true }, true)
  }

  // Catalogue

  listServerTypes(filter: { name?: string } = {}): Promise<ServerType[]> {
    return listAll(this.transport, '/server_types', 'server_types', readServerType, { name: filter.name })
  }

  listLocations(filter: { name?: string } = {}): Promise<Location[]> {
    return listAll(this.transport, '/locations', 'locations', readLocation, { name: filter.name })
  }

  listImages(filter: ListFilter & { type?: string; architecture?: 'x86' | 'arm' } = {}): Promise<Image[]> {
    return listAll(this.transport, '/images', 'images', readImage, {
      label_selector: filter.labelSelector,
      name: filter.name,
      type: filter.type,
      architecture: filter.architecture,
    })
  }

  // SSH keys

  listSshKeys(filter: ListFilter = {}): Promise<SshKey[]> {
    return listAll(this.transport, '/ssh_keys', 'ssh_keys', readSshKey, {
      label_selector: filter.labelSelector,
      name: filter.name,
    })
  }

  createSshKey(request: { name: string; public_key: string; labels?: Labels }): Promise<SshKey> {
    return post(this.transport, '/ssh_keys', request, false, 'ssh_key', readSshKey)
  }

  // Firewalls

  listFirewalls(filter: ListFilter = {}): Promise<Firewall[]> {
    return listAll(this.transport, '/firewalls', 'firewalls', readFirewall, {
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
    const body = await this.transport.call('POST', '/firewalls', { body: request, idempotent: false })
    const answer: Answer = { method: 'POST', path: '/firewalls', ambiguous: true }
    return {
      firewall: readKey(body, answer, 'firewall', readFirewall),
      actions: readKey(body, answer, 'actions', optionalActions),
    }
  }

  /** Replaces every rule with `rules` (the whole desired set): the same call twice is the same firewall. */
  async setFirewallRules(id: number, rules: FirewallRule[]): Promise<Action[]> {
    const path = idPath('firewalls', id, '/actions/set_rules')
    return post(this.transport, path, { rules }, true, 'actions', listOf(readAction))
  }

  async applyFirewall(id: number, applyTo: FirewallResource[]): Promise<Action[]> {
    const path = idPath('firewalls', id, '/actions/apply_to_resources')
    return post(this.transport, path, { apply_to: applyTo }, false, 'actions', listOf(readAction))
  }

  // Placement groups

  listPlacementGroups(filter: ListFilter = {}): Promise<PlacementGroup[]> {
    return listAll(this.transport, '/placement_groups', 'placement_groups', readPlacementGroup, {
      label_selector: filter.labelSelector,
      name: filter.name,
    })
  }

  createPlacementGroup(request: { name: string; labels?: Labels }): Promise<PlacementGroup> {
    const body = { ...request, type: 'spread' }
    return post(this.transport, '/placement_groups', body, false, 'placement_group', readPlacementGroup)
  }

  // Actions

  /** The actions with these IDs, asked in batches (`GET /actions?id=1&id=2`), never one call each. */
  async getActions(ids: readonly number[]): Promise<Action[]> {
    const actions: Action[] = []
    for (let i = 0; i < ids.length; i += ACTIONS_PER_CALL) {
      const batch = ids.slice(i, i + ACTIONS_PER_CALL).map(idOf)
      actions.push(...(await listAll(this.transport, '/actions', 'actions', readAction, { id: batch })))
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

/** `next_actions` / `actions` of a change's answer: absent is none; present, every one must read. */
function optionalActions(value: unknown, answer: Answer, field: string): Action[] {
  return value === undefined ? [] : listOf(readAction)(value, answer, field)
}

/**
 * An ID a request is about, checked before anything is sent: `DELETE /servers/NaN` answers 404, which
 * would read as "already gone". Only a bug passes anything else (every ID the API gave was read).
 */
function idOf(id: number): number {
  if (!isResourceId(id))
    throw new FleetkitError('INTERNAL_ERROR', `refusing to send a Hetzner Cloud request for the id ${String(id)}`, {
      data: { id: String(id) },
    })
  return id
}

function idPath(collection: string, id: number, rest = ''): string {
  return `/${collection}/${idOf(id)}${rest}`
}
