// The operator API (issue 11): allocations reserve, release and list over HTTP, and the status
// page (status-routes.ts), served on the
// loopback metrics listener (loopback peers only) and on the mTLS listener (operator certificates only).
import type { IncomingMessage } from 'node:http'
import type { TLSSocket } from 'node:tls'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { derFingerprintSha256 } from '../../pki/fingerprint.js'
import { hasControlCharacters } from '../../protocol/terminal-text.js'
import {
  type AllocationRow,
  listAllocations,
  releaseAllocationById,
  reserveAllocation,
} from '../../store/scheduling/allocations.js'
import { findLiveOperatorCertificate } from '../../store/pki/operator-certificates.js'
import type { GatewayContext } from './gateway-context.js'
import type { RequestContext, Route } from './router.js'
import { statusRoutes } from './status-routes.js'

export const OPERATOR_PREFIX = '/v1/operator/'

/** `loopback`: the caller must be 127.0.0.0/8 or ::1; `certificate`: it must present a live operator certificate. */
export type OperatorAccess = 'loopback' | 'certificate'

export function operatorRoutes(g: GatewayContext, access: OperatorAccess): Route[] {
  const guarded = (fn: (ctx: RequestContext, actor: string) => Promise<object>) => async (ctx: RequestContext) => {
    const actor = await operatorOf(g, ctx.req, access)
    // A browser on the gateway host can send a cross-site POST to loopback only as a "simple" request,
    // never with this content type without a CORS preflight (which is not answered): no CSRF.
    if (ctx.req.method === 'POST' && !/^application\/json\s*(;|$)/i.test(ctx.req.headers['content-type'] ?? '')) {
      throw new FleetkitError(
        'REQUEST_INVALID',
        'operator API requests that change state must be sent with content-type: application/json',
        { data: { httpStatus: 415 } },
      )
    }
    return fn(ctx, actor)
  }
  return [
    ...statusRoutes(g, (req) => operatorOf(g, req, access)),
    { method: 'GET', pattern: '/v1/operator/allocations', auth: 'none', handler: guarded(async (ctx) => list(g, ctx)) },
    {
      method: 'POST',
      pattern: '/v1/operator/allocations',
      auth: 'none',
      handler: guarded(async (ctx, actor) => reserve(g, ctx, actor)),
    },
    {
      method: 'POST',
      pattern: '/v1/operator/allocations/:id/release',
      auth: 'none',
      handler: guarded(async (ctx, actor) => ({
        allocation: wire(await releaseAllocationById(g.pool, ctx.params.id!, actor)),
      })),
    },
  ]
}

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/
/** The names a request to a loopback listener may be addressed to (its Host header): localhost or a loopback address. */
const LOOPBACK_HOST =
  /^(localhost\.?|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|\[::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}\])(:\d{1,5})?$/i

async function operatorOf(g: GatewayContext, req: IncomingMessage, access: OperatorAccess): Promise<string> {
  if (access === 'loopback') {
    if (!LOOPBACK.test(req.socket.remoteAddress ?? ''))
      throw refused('the operator API on this listener answers loopback callers only')
    // A page on another site whose name it points at 127.0.0.1 (DNS rebinding) is same-origin to the browser that
    // shows it, and its requests come from loopback: they still carry that site's name as their Host.
    if (!LOOPBACK_HOST.test(req.headers.host ?? ''))
      throw refused(
        'the operator API on this listener answers requests addressed to localhost or a loopback address only',
      )
    return 'loopback'
  }
  const socket = req.socket as TLSSocket
  const raw =
    socket.authorized && typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate().raw : undefined
  const operator = raw ? await findLiveOperatorCertificate(g.pool, derFingerprintSha256(raw)) : undefined
  if (!operator) throw refused('this client certificate is not a live operator certificate')
  return `operator:${operator.name}`
}

function refused(message: string): FleetkitError {
  return new FleetkitError('OPERATOR_REFUSED', message, {
    actions: [
      'fleetkit ca operator-cert NAME',
      'call the API from the gateway host over loopback (FLEETKIT_METRICS_BIND)',
    ],
  })
}

async function list(g: GatewayContext, ctx: RequestContext): Promise<object> {
  const url = new URL(ctx.req.url ?? '/', 'http://x')
  const nodeParam = url.searchParams.get('node')
  const node = nodeParam === null || nodeParam === '' ? undefined : text(nodeParam, 'node', 253)
  const status = url.searchParams.get('status') ?? undefined
  if (status !== undefined && status !== 'active' && status !== 'released' && status !== 'stranded')
    throw new FleetkitError('REQUEST_INVALID', 'status is active, released or stranded')
  const rows = await listAllocations(g.pool, { ...(node ? { nodeId: node } : {}), ...(status ? { status } : {}) })
  return { allocations: rows.map(wire) }
}

async function reserve(g: GatewayContext, ctx: RequestContext, actor: string): Promise<object> {
  const body = await ctx.body()
  const nodeId = text(body.node_id, 'node_id', 253)
  const owner = text(body.owner, 'owner', 256)
  const cpu = amount(body.cpu, 'cpu', false)
  const memoryMib = amount(body.memory_mib, 'memory_mib', true)
  const diskGib = amount(body.disk_gib, 'disk_gib', true)
  const row = await reserveAllocation(g.pool, { nodeId, owner, cpu, memoryMib, diskGib, actor })
  return { allocation: wire(row) }
}

function text(value: unknown, field: string, max: number): string {
  // No control character, nor a bidi or zero-width mark: the value is stored and printed on terminals
  // (`alloc list`, `node show`), where U+202E would turn the rest of the row around.
  if (typeof value !== 'string' || value.length < 1 || value.length > max || hasControlCharacters(value))
    throw new FleetkitError(
      'REQUEST_INVALID',
      `${field} must be a printable string of 1 to ${max} characters, with no control character or bidi or zero-width mark`,
      {
        data: { field },
      },
    )
  return value
}

function amount(value: unknown, field: string, integer: boolean): number {
  if (value === undefined) return 0
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < 0 ||
    value > 1_000_000 ||
    (integer && !Number.isInteger(value))
  ) {
    throw new FleetkitError(
      'REQUEST_INVALID',
      `${field} must be a ${integer ? 'whole ' : ''}number from 0 to 1000000`,
      { data: { field } },
    )
  }
  return integer ? value : Math.round(value * 100) / 100
}

function wire(a: AllocationRow): Record<string, unknown> {
  return {
    id: a.id,
    node_id: a.nodeId,
    owner: a.owner,
    cpu: a.cpu,
    memory_mib: a.memoryMib,
    disk_gib: a.diskGib,
    status: a.status,
    created_at: a.createdAt.toISOString(),
    released_at: a.releasedAt?.toISOString() ?? null,
    release_reason: a.releaseReason,
    stranded_at: a.strandedAt?.toISOString() ?? null,
  }
}
