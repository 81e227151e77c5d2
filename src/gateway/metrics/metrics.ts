// Prometheus text exposition for the gateway: labelled counters, one histogram, and
// gauges read at scrape time. Small on purpose: a dependency would do more than we need.

type Labels = Record<string, string>

/** The exposition form of a label set, sorted by name. Hot paths compute it once and use `incKey`. */
export function labelKey(labels: Labels): string {
  return key(labels)
}

function key(labels: Labels): string {
  return Object.entries(labels)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`)
    .join(',')
}

class Counter {
  readonly values = new Map<string, number>()
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  inc(labels: Labels = {}, by = 1): void {
    this.incKey(key(labels), by)
  }
  /** Count under a label key made by `labelKey` (no sorting or escaping per call). */
  incKey(k: string, by = 1): void {
    this.values.set(k, (this.values.get(k) ?? 0) + by)
  }
  get(labels: Labels = {}): number {
    return this.values.get(key(labels)) ?? 0
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`]
    for (const [k, v] of this.values) lines.push(`${this.name}${k ? `{${k}}` : ''} ${v}`)
    return lines.join('\n')
  }
}

class Histogram {
  private readonly counts: number[]
  private sum = 0
  private count = 0
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: number[],
  ) {
    this.counts = buckets.map(() => 0)
  }
  observe(value: number): void {
    this.sum += value
    this.count += 1
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) this.counts[i]! += 1
  }
  get observations(): number {
    return this.count
  }
  /** The cumulative bucket counts (`le` ascending, +Inf last as Infinity) and the total: what the status page reads. */
  snapshot(): { count: number; sum: number; buckets: { le: number; count: number }[] } {
    return {
      count: this.count,
      sum: this.sum,
      buckets: [...this.buckets.map((le, i) => ({ le, count: this.counts[i]! })), { le: Infinity, count: this.count }],
    }
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`]
    this.buckets.forEach((b, i) => lines.push(`${this.name}_bucket{le="${b}"} ${this.counts[i]}`))
    lines.push(
      `${this.name}_bucket{le="+Inf"} ${this.count}`,
      `${this.name}_sum ${this.sum}`,
      `${this.name}_count ${this.count}`,
    )
    return lines.join('\n')
  }
}

export interface GaugeReading {
  name: string
  help: string
  samples: { labels?: Labels; value: number }[]
}

export class GatewayMetrics {
  readonly requests = new Counter('fleetkit_gateway_requests_total', 'HTTP requests by listener, route and status.')
  readonly enrollments = new Counter(
    'fleetkit_gateway_enrollments_total',
    'Enrollment attempts by outcome (issued, replayed, refused, csr_invalid, invalid, rate_limited).',
  )
  readonly enrollConnectionsClosed = new Counter(
    'fleetkit_gateway_enroll_connections_closed_total',
    'Enrollment-listener connections closed by a limit (total_cap, source_cap, idle).',
  )
  readonly agentConnectionsClosed = new Counter(
    'fleetkit_gateway_agent_connections_closed_total',
    'Agent-listener connections closed by a limit (total_cap, source_cap).',
  )
  readonly renewals = new Counter(
    'fleetkit_gateway_renewals_total',
    'Certificate renewal attempts by outcome (issued, not_due, csr_invalid, rate_limited).',
  )
  readonly authRefusals = new Counter(
    'fleetkit_gateway_agent_auth_refusals_total',
    'Agent requests refused at authentication, by reason.',
  )
  readonly revocations = new Counter(
    'fleetkit_gateway_certificates_revoked_total',
    'Agent certificates revoked because a newer one was used.',
  )
  readonly requestsShed = new Counter(
    'fleetkit_gateway_requests_shed_total',
    'Requests answered 503 gateway_overloaded before any work, by listener, priority and reason (event_loop_delay, in_flight).',
  )
  readonly heartbeatFlushFailures = new Counter(
    'fleetkit_gateway_heartbeat_flush_failures_total',
    'Heartbeat batch writes that failed (the batch is retried).',
  )
  readonly driftVerdictsWritten = new Counter(
    'fleetkit_gateway_drift_verdicts_written_total',
    "Changes of a node's drift verdict this gateway wrote, by the new state (in_sync, drifted, unknown); an unchanged digest writes none.",
  )
  readonly driftReads = new Counter(
    'fleetkit_gateway_drift_reads_total',
    "Reads of a node's recorded fingerprint to judge a heartbeat's drift digest (a changed digest, or a held copy past its reload time); an unchanged digest reads nothing.",
  )
  readonly heartbeatBatchSize = new Histogram(
    'fleetkit_gateway_heartbeat_batch_size',
    'Nodes per heartbeat write transaction.',
    [1, 10, 100, 1000, 10000],
  )
  readonly requestSeconds = new Histogram(
    'fleetkit_gateway_request_duration_seconds',
    'Request handling time.',
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  )

  render(gauges: GaugeReading[] = []): string {
    const parts = [
      this.requests,
      this.enrollments,
      this.enrollConnectionsClosed,
      this.agentConnectionsClosed,
      this.renewals,
      this.requestsShed,
      this.authRefusals,
      this.revocations,
      this.heartbeatFlushFailures,
      this.driftVerdictsWritten,
      this.driftReads,
      this.heartbeatBatchSize,
      this.requestSeconds,
    ].map((m) => m.render())
    for (const gauge of gauges) {
      const lines = [`# HELP ${gauge.name} ${gauge.help}`, `# TYPE ${gauge.name} gauge`]
      for (const s of gauge.samples) {
        const k = key(s.labels ?? {})
        lines.push(`${gauge.name}${k ? `{${k}}` : ''} ${s.value}`)
      }
      parts.push(lines.join('\n'))
    }
    return parts.join('\n') + '\n'
  }
}
