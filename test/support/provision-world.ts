// What the provisioning tests run against: a disposable PostgreSQL, a gateway on it, the Hetzner stub
// (its actions 2 s on one injected clock) and fleetkit's client of it on the same clock, and a valid
// definition pointed at the gateway with a build pool in two regions.
import { createHash } from 'node:crypto'
import { gunzipSync } from 'node:zlib'

import { fixedClock } from '../../src/config/clock.js'
import { seededRng } from '../../src/config/rng.js'
import type { Definition } from '../../src/definition/types.js'
import { HetznerClient } from '../../src/provider/hetzner.js'
import { type HetznerStub, startHetznerStub } from '../../src/provider/hetzner-stub.js'
import type { StubServer } from '../../src/provider/stub-resources.js'
import { validDefinition } from './definition-fixture.js'
import { startTestGateway, type TestGateway } from './gateway.js'
import { type DisposablePostgres, startDisposablePostgres } from './postgres.js'

/** A server's user data as the stub received it: gzip, then base64. */
export const decodeUserData = (userData: string) => gunzipSync(Buffer.from(userData, 'base64')).toString('utf8')

export interface ProvisionWorld {
  pg: DisposablePostgres
  gw: TestGateway
  stub: HetznerStub
  client: HetznerClient
  definition: Definition
  clock: ReturnType<typeof fixedClock>
  /** Advances the clock instead of waiting. */
  sleep: (ms: number) => Promise<void>
  /** The create requests the stub received for a server of that name. */
  creates: (name: string) => HetznerStub['requests']
  /** The stub's servers labelled as NODE's. */
  serversOf: (nodeId: string) => StubServer[]
  /** The clear secret in the node's last create request, found by the hash the state holds (undefined: none matches). */
  secretOf: (nodeId: string) => Promise<string | undefined>
  /** An afterStep hook that enrolls the node with the gateway once it awaits its enrollment. */
  enrollHook: (nodeId: string) => (step: string) => Promise<void>
  close: () => Promise<void>
}

export async function startProvisionWorld(): Promise<ProvisionWorld> {
  const clock = fixedClock(new Date())
  const sleep = async (ms: number) => clock.advance(ms)
  const pg = await startDisposablePostgres()
  const gw = await startTestGateway({ postgresUrl: pg.url, sweep: null })
  const stub = await startHetznerStub({ clock, actionDurationMs: 2000 })
  const client = new HetznerClient({
    env: { HETZNER_API_TOKEN: stub.token },
    baseUrl: stub.url,
    clock,
    sleep,
    rng: seededRng('client'),
    requestTimeoutMs: 500,
  })
  const definition = validDefinition()
  definition.gateway = { url: gw.agentUrl, enrollUrl: gw.enrollUrl }
  definition.pools.build!.regions = ['fsn1', 'nbg1']
  const creates: ProvisionWorld['creates'] = (name) =>
    stub.requests.filter(
      (r) => r.method === 'POST' && r.path === '/servers' && (r.body as { name?: string })?.name === name,
    )
  const secretOf = async (nodeId: string): Promise<string | undefined> => {
    const request = creates(nodeId).at(-1)
    if (!request) return undefined
    const document = decodeUserData((request.body as { user_data: string }).user_data)
    const { rows } = await gw.db.pool.query<{ h: string }>(
      `SELECT encode(enrollment_secret_sha256, 'hex') AS h FROM nodes WHERE id = $1`,
      [nodeId],
    )
    return (document.match(/[0-9a-f]{64}/g) ?? []).find(
      (s) => createHash('sha256').update(s).digest('hex') === rows[0]?.h,
    )
  }
  return {
    pg,
    gw,
    stub,
    client,
    definition,
    clock,
    sleep,
    creates,
    secretOf,
    enrollHook: (nodeId) => async (step) => {
      if (step !== 'awaiting_enrollment') return
      const secret = await secretOf(nodeId)
      if (!secret) throw new Error(`no secret of ${nodeId} in its seed matches the state`)
      await gw.enroll(nodeId, secret)
    },
    serversOf: (nodeId) => [...stub.api.servers.values()].filter((s) => s.labels['fleetkit.node_id'] === nodeId),
    close: async () => {
      await stub.close()
      await gw.close()
      await pg.stop()
    },
  }
}
