// One injected clock for a Hetzner client and its stub: the client's sleeps advance it (and are
// recorded), so rate-limit waits, backoff and action delays are tested without sleeping.
import { fixedClock } from '../../src/config/clock.js'
import { seededRng } from '../../src/config/rng.js'
import { HetznerClient, type HetznerClientOptions } from '../../src/provider/hetzner.js'
import { type HetznerStub, type HetznerStubOptions, startHetznerStub } from '../../src/provider/hetzner-stub.js'

export interface HetznerTimeline {
  clock: ReturnType<typeof fixedClock>
  /** Every wait the client asked for, in order. */
  waits: number[]
  sleep: (ms: number) => Promise<void>
}

export function hetznerTimeline(): HetznerTimeline {
  const clock = fixedClock(new Date('2026-03-01T12:00:00Z'))
  const waits: number[] = []
  return {
    clock,
    waits,
    sleep: async (ms) => {
      waits.push(ms)
      clock.advance(ms)
    },
  }
}

/** A stub on loopback and a client of it sharing one timeline. */
export async function stubAndClient(
  stubOptions: HetznerStubOptions = {},
  clientOptions: HetznerClientOptions = {},
): Promise<{ stub: HetznerStub; client: HetznerClient; timeline: HetznerTimeline }> {
  const timeline = hetznerTimeline()
  const stub = await startHetznerStub({ clock: timeline.clock, ...stubOptions })
  const client = new HetznerClient({
    env: { HETZNER_API_TOKEN: stub.token },
    baseUrl: stub.url,
    clock: timeline.clock,
    sleep: timeline.sleep,
    rng: seededRng('hetzner-client'),
    ...clientOptions,
  })
  return { stub, client, timeline }
}
