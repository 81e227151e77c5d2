// The gateway's configuration from the environment (spec 05's table), every value
// checked and defaulted for one machine; a bad value is GATEWAY_CONFIG_INVALID.
import { isIP } from 'node:net'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { resolveStateDir, type Env } from '../config/state-dir.js'
import { resolvePkiDir } from '../pki/pki-dir.js'

export interface BindAddress {
  host: string
  port: number
}

export interface GatewayConfig {
  /** From DATABASE_URL; never printed (it may hold a password). Undefined: the embedded server. */
  databaseUrl: string | undefined
  stateDir: string
  pkiDir: string
  enrollBind: BindAddress
  agentBind: BindAddress
  metricsBind: BindAddress
  agentCertLifetimeSeconds: number
  agentRenewCheckSeconds: number
  /** Limits of the unauthenticated enrollment listener (connection-limits.ts). */
  enrollConnections: { maxConnections: number; maxPerSource: number; idleTimeoutMs: number }
  /** Limits of the agent listener (connection-limits.ts). */
  agentConnections: { maxConnections: number; maxPerSource: number }
  recoveryWindowSeconds: number
  /** Event-loop delays (ms) at which load levels 1, 2 and 3 begin; undefined: delay-based shedding is off. */
  shedDelayThresholdsMs: [number, number, number] | undefined
  /** How long the sweep lease lasts unrenewed: the longest a dead or cut-off leader's sweeps are missed. */
  sweepLeaseSeconds: number
}

const GATEWAY_DEFAULTS = {
  FLEETKIT_ENROLL_BIND: '127.0.0.1:8444',
  FLEETKIT_AGENT_BIND: '127.0.0.1:8443',
  FLEETKIT_METRICS_BIND: '127.0.0.1:9464',
  FLEETKIT_AGENT_CERT_LIFETIME_SECONDS: '86400',
  FLEETKIT_AGENT_RENEW_CHECK_SECONDS: '600',
  FLEETKIT_ENROLL_MAX_CONNECTIONS: '512',
  FLEETKIT_ENROLL_MAX_CONNECTIONS_PER_SOURCE: '64',
  FLEETKIT_ENROLL_IDLE_SECONDS: '10',
  FLEETKIT_AGENT_MAX_CONNECTIONS: '16384',
  FLEETKIT_AGENT_MAX_CONNECTIONS_PER_SOURCE: '1024',
  FLEETKIT_RECOVERY_WINDOW_SECONDS: '604800',
  FLEETKIT_SHED_EVENT_LOOP_DELAY_MS: '150,500,2000',
  FLEETKIT_SWEEP_LEASE_SECONDS: '10',
} as const

export function loadGatewayConfig(env: Env = process.env): GatewayConfig {
  const value = (name: keyof typeof GATEWAY_DEFAULTS) => env[name]?.trim() || GATEWAY_DEFAULTS[name]
  const lifetime = parseSeconds(
    'FLEETKIT_AGENT_CERT_LIFETIME_SECONDS',
    value('FLEETKIT_AGENT_CERT_LIFETIME_SECONDS'),
    30,
    397 * 86400,
  )
  const renewCheck = parseSeconds(
    'FLEETKIT_AGENT_RENEW_CHECK_SECONDS',
    value('FLEETKIT_AGENT_RENEW_CHECK_SECONDS'),
    1,
    86400,
  )
  if (renewCheck * 3 > lifetime) {
    throw invalid(
      'FLEETKIT_AGENT_RENEW_CHECK_SECONDS',
      `must be at most a third of FLEETKIT_AGENT_CERT_LIFETIME_SECONDS (${lifetime}), or agents may miss their renewal window`,
    )
  }
  const databaseUrl = env.DATABASE_URL?.trim() || undefined
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    // The value is not echoed: it may hold a password.
    throw invalid('DATABASE_URL', 'must be a postgres:// or postgresql:// URL')
  }
  return {
    databaseUrl,
    stateDir: resolveStateDir(env),
    pkiDir: resolvePkiDir(env),
    enrollBind: parseBind('FLEETKIT_ENROLL_BIND', value('FLEETKIT_ENROLL_BIND')),
    agentBind: parseBind('FLEETKIT_AGENT_BIND', value('FLEETKIT_AGENT_BIND')),
    metricsBind: parseBind('FLEETKIT_METRICS_BIND', value('FLEETKIT_METRICS_BIND')),
    agentCertLifetimeSeconds: lifetime,
    agentRenewCheckSeconds: renewCheck,
    enrollConnections: {
      maxConnections: parseCount(
        'FLEETKIT_ENROLL_MAX_CONNECTIONS',
        value('FLEETKIT_ENROLL_MAX_CONNECTIONS'),
        1,
        1_000_000,
      ),
      maxPerSource: parseCount(
        'FLEETKIT_ENROLL_MAX_CONNECTIONS_PER_SOURCE',
        value('FLEETKIT_ENROLL_MAX_CONNECTIONS_PER_SOURCE'),
        1,
        1_000_000,
      ),
      idleTimeoutMs:
        parseSeconds('FLEETKIT_ENROLL_IDLE_SECONDS', value('FLEETKIT_ENROLL_IDLE_SECONDS'), 1, 3600) * 1000,
    },
    agentConnections: {
      maxConnections: parseCount(
        'FLEETKIT_AGENT_MAX_CONNECTIONS',
        value('FLEETKIT_AGENT_MAX_CONNECTIONS'),
        1,
        1_000_000,
      ),
      maxPerSource: parseCount(
        'FLEETKIT_AGENT_MAX_CONNECTIONS_PER_SOURCE',
        value('FLEETKIT_AGENT_MAX_CONNECTIONS_PER_SOURCE'),
        1,
        1_000_000,
      ),
    },
    // 0 turns recovery off: every node whose certificate expired needs a new secret.
    recoveryWindowSeconds: parseSeconds(
      'FLEETKIT_RECOVERY_WINDOW_SECONDS',
      value('FLEETKIT_RECOVERY_WINDOW_SECONDS'),
      0,
      90 * 86400,
    ),
    shedDelayThresholdsMs: parseDelayThresholds(value('FLEETKIT_SHED_EVENT_LOOP_DELAY_MS')),
    // At least two sweep ticks (2 s each) and a margin, or the leader could lose it between renewals.
    sweepLeaseSeconds: parseSeconds('FLEETKIT_SWEEP_LEASE_SECONDS', value('FLEETKIT_SWEEP_LEASE_SECONDS'), 5, 600),
  }
}

/** `L1,L2,L3` in ms, rising (`0` turns delay-based shedding off; the in-flight limits stay). */
function parseDelayThresholds(text: string): [number, number, number] | undefined {
  const name = 'FLEETKIT_SHED_EVENT_LOOP_DELAY_MS'
  if (text === '0') return undefined
  const parts = text.split(',').map((part) => part.trim())
  if (parts.length !== 3 || parts.some((part) => !/^\d{1,6}$/.test(part)))
    throw invalid(
      name,
      `${JSON.stringify(text.slice(0, 40))} is not three whole numbers of milliseconds (L1,L2,L3) or 0`,
    )
  const [a, b, c] = parts.map(Number) as [number, number, number]
  if (a < 20 || !(a < b && b < c)) throw invalid(name, 'must rise (L1 < L2 < L3), from at least 20 ms')
  return [a, b, c]
}

/** `HOST:PORT` or `[IPV6]:PORT`; the host must be an IP address (a listener binds addresses, not names). */
export function parseBind(name: string, text: string): BindAddress {
  const match = /^\[([0-9a-fA-F:.]+)\]:(\d{1,5})$/.exec(text) ?? /^([0-9.]+|localhost):(\d{1,5})$/.exec(text)
  if (!match) throw invalid(name, `${JSON.stringify(text)} is not HOST:PORT or [IPV6]:PORT with an IP address`)
  const host = match[1] === 'localhost' ? '127.0.0.1' : match[1]!
  const port = Number(match[2])
  if (isIP(host) === 0) throw invalid(name, `${JSON.stringify(host)} is not an IP address`)
  if (port > 65535) throw invalid(name, `port ${port} is above 65535`)
  return { host, port }
}

export function formatBind(bind: BindAddress): string {
  return isIP(bind.host) === 6 ? `[${bind.host}]:${bind.port}` : `${bind.host}:${bind.port}`
}

function parseSeconds(name: string, text: string, min: number, max: number): number {
  if (!/^\d{1,10}$/.test(text)) throw invalid(name, `${JSON.stringify(text)} is not a whole number of seconds`)
  const n = Number(text)
  if (n < min || n > max) throw invalid(name, `${n} is outside ${min}..${max} seconds`)
  return n
}

function parseCount(name: string, text: string, min: number, max: number): number {
  if (!/^\d{1,10}$/.test(text)) throw invalid(name, `${JSON.stringify(text)} is not a whole number`)
  const n = Number(text)
  if (n < min || n > max) throw invalid(name, `${n} is outside ${min}..${max}`)
  return n
}

function invalid(name: string, problem: string): FleetkitError {
  return new FleetkitError('GATEWAY_CONFIG_INVALID', `${name} ${problem}`, {
    actions: [`unset ${name} to use its default, or correct it (docs/gateway.md lists every variable)`],
    data: { variable: name },
  })
}
