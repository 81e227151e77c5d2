// The local Hetzner Cloud stub's volumes: create (in a location, or attached to a server), attach,
// detach and delete, with the API's field names and bounds (10 to 10,240 GB), actions that take effect
// when they finish, `locked` while one runs, and a volume that must be detached before it is deleted.
import { STUB_LOCATIONS } from './stub-catalogue.js'
import { apiError, invalidInput, type StubResponse, uniquenessError } from './stub-errors.js'
import type { Action, Labels } from './hetzner-types.js'
import type { StubMachines } from './stub-machines.js'
import type { StubServer, StubVolume } from './stub-resources.js'

/** What the volume routes need of the stub: its volumes and servers, fresh IDs and actions. */
export interface VolumeContext {
  volumes: Map<number, StubVolume>
  servers: Map<number, StubServer>
  newId(): number
  action(
    command: string,
    resources: { id: number; type: string }[],
    onFinish?: () => void,
    work?: Promise<void>,
  ): Action
  /** Real block devices behind the volumes (`provider stub --boot`). */
  machines?: StubMachines | undefined
  /** Whether an action on this resource is still running. */
  busy(type: string, id: number): boolean
  /** The stub's clock, as the API writes times. */
  nowIso(): string
}

const NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i
const MIN_GB = 10
const MAX_GB = 10_240

export function createVolume(ctx: VolumeContext, input: unknown): StubResponse {
  const body = (input ?? {}) as Record<string, unknown>
  if (typeof body.name !== 'string' || !NAME.test(body.name)) return invalidInput('name', 'name is invalid')
  if (!Number.isInteger(body.size) || (body.size as number) < MIN_GB || (body.size as number) > MAX_GB)
    return invalidInput('size', `size must be an integer between ${MIN_GB} and ${MAX_GB}`)
  const labels = (body.labels ?? {}) as Labels
  if (typeof labels !== 'object' || Object.keys(labels).some((k) => k.startsWith('hetzner.cloud/')))
    return invalidInput('labels', 'labels are invalid')
  if (body.format !== undefined && body.format !== 'xfs' && body.format !== 'ext4')
    return invalidInput('format', 'format must be xfs or ext4')
  if ((body.location === undefined) === (body.server === undefined))
    return invalidInput('location', 'exactly one of location and server is required')
  const server = body.server === undefined ? undefined : ctx.servers.get(Number(body.server))
  if (body.server !== undefined && !server) return invalidInput('server', 'server not found')
  if (body.automount !== undefined && !server) return invalidInput('automount', 'automount requires a server')
  const location = server ? server.datacenter.location : STUB_LOCATIONS.find((l) => l.name === body.location)
  if (!location) return invalidInput('location', 'location not found')
  if ([...ctx.volumes.values()].some((v) => v.name === body.name)) return uniquenessError('volume')
  const id = ctx.newId()
  const volume: StubVolume = {
    id,
    name: body.name,
    created: ctx.nowIso(),
    server: null,
    location,
    size: body.size as number,
    linux_device: `/dev/disk/by-id/scsi-0HC_Volume_${id}`,
    status: 'creating',
    format: (body.format as string | undefined) ?? null,
    labels: { ...labels },
    protection: { delete: false },
  }
  ctx.volumes.set(id, volume)
  const resources = [{ id, type: 'volume' }]
  const made = ctx.machines?.createVolume({ id, sizeGb: volume.size, format: volume.format })
  const action = ctx.action(
    'create_volume',
    resources,
    () => {
      volume.status = 'available'
    },
    made,
  )
  const next = server
    ? [
        ctx.action(
          'attach_volume',
          [...resources, { id: server.id, type: 'server' }],
          () => attach(ctx, volume, server.id),
          made?.then(() => ctx.machines!.attachVolume(id, server.id)),
        ),
      ]
    : []
  return { status: 201, body: { volume, action, next_actions: next } }
}

export function attachVolume(ctx: VolumeContext, id: number, input: unknown): StubResponse {
  const volume = ctx.volumes.get(id)
  if (!volume) return apiError(404, 'not_found', 'volume not found')
  const serverId = (input as { server?: unknown } | null)?.server
  const server = typeof serverId === 'number' ? ctx.servers.get(serverId) : undefined
  if (!server) return invalidInput('server', 'server not found')
  if (ctx.busy('volume', id) || ctx.busy('server', server.id))
    return apiError(423, 'locked', 'the resource is locked by a running action')
  if (volume.server !== null)
    return apiError(409, 'volume_already_attached', 'volume is already attached to a server, detach first')
  if (server.datacenter.location.name !== volume.location.name)
    return invalidInput('server', 'server must be in the location of the volume')
  const action = ctx.action(
    'attach_volume',
    [
      { id, type: 'volume' },
      { id: server.id, type: 'server' },
    ],
    () => attach(ctx, volume, server.id),
    ctx.machines?.attachVolume(id, server.id),
  )
  return { status: 201, body: { action } }
}

export function detachVolume(ctx: VolumeContext, id: number): StubResponse {
  const volume = ctx.volumes.get(id)
  if (!volume) return apiError(404, 'not_found', 'volume not found')
  if (ctx.busy('volume', id)) return apiError(423, 'locked', 'the resource is locked by a running action')
  // The API's code for a volume that is not attached is not documented: clients look before they detach.
  if (volume.server === null) return apiError(409, 'conflict', 'volume is not attached to a server')
  const resources = [
    { id, type: 'volume' },
    { id: volume.server, type: 'server' },
  ]
  const action = ctx.action(
    'detach_volume',
    resources,
    () => attach(ctx, volume, null),
    ctx.machines?.detachVolume(id, volume.server),
  )
  return { status: 201, body: { action } }
}

export function deleteVolume(ctx: VolumeContext, id: number): StubResponse {
  const volume = ctx.volumes.get(id)
  if (!volume) return apiError(404, 'not_found', 'volume not found')
  if (volume.protection.delete) return apiError(423, 'protected', 'volume is protected')
  if (ctx.busy('volume', id)) return apiError(423, 'locked', 'the resource is locked by a running action')
  // Undocumented code likewise: the API refuses to delete an attached volume.
  if (volume.server !== null) return apiError(409, 'conflict', 'volume is attached to a server, detach it first')
  ctx.volumes.delete(id)
  // The API answers 204 with no action: the block device goes in the background (a failure is logged by the machines).
  void ctx.machines?.deleteVolume(id).catch(() => undefined)
  return { status: 204, body: undefined }
}

/** Attaches the volume to the server (null: detaches it), on both sides: `server` and the server's `volumes`. */
function attach(ctx: VolumeContext, volume: StubVolume, serverId: number | null): void {
  const before = volume.server === null ? undefined : ctx.servers.get(volume.server)
  if (before) before.volumes = before.volumes.filter((v) => v !== volume.id)
  volume.server = serverId
  const after = serverId === null ? undefined : ctx.servers.get(serverId)
  if (after && !after.volumes.includes(volume.id)) after.volumes.push(volume.id)
}

/** Deleting a server detaches its volumes; they are kept. */
export function detachVolumesOf(ctx: VolumeContext, serverId: number): void {
  for (const volume of ctx.volumes.values()) if (volume.server === serverId) volume.server = null
}
