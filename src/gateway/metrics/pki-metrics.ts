// The PKI's gauges: when the CA and the server certificate the gateway serves with expire (from the loaded
// set, so a hot reload shows at once), and an open CA rotation with where the fleet stands on it (the state).
import { Gauge, type Registry } from 'prom-client'

import type { Clock } from '../../config/clock.js'
import type { PkiSet } from '../../pki/pki-set.js'
import { latestRotation, rotationProgress } from '../../store/pki/ca-rotations.js'
import type { Queryable } from '../../store/database.js'
import { collectTogether } from './scrape-gauges.js'

export interface PkiGaugeSources {
  pool: Queryable
  pki: () => PkiSet
  clock: Clock
  onError: (query: string, error: unknown) => void
}

export function registerPkiGauges(registry: Registry, sources: PkiGaugeSources): void {
  const seconds = (date: Date) => Math.floor(date.getTime() / 1000)
  new Gauge({
    name: 'fleetkit_ca_certificate_expiry_timestamp_seconds',
    help: 'When the CA certificate this gateway issues from expires (Unix time).',
    registers: [registry],
    collect() {
      this.set(seconds(sources.pki().ca.certificate.notAfter))
    },
  })
  new Gauge({
    name: 'fleetkit_gateway_server_certificate_expiry_timestamp_seconds',
    help: 'When the server certificate of the enrollment and agent listeners expires (Unix time).',
    registers: [registry],
    collect() {
      this.set(seconds(sources.pki().server.notAfter))
    },
  })
  const inProgress = new Gauge({
    name: 'fleetkit_ca_rotation_in_progress',
    help: '1 while a CA rotation is begun (neither completed nor aborted), else 0.',
    registers: [registry],
  })
  const begun = new Gauge({
    name: 'fleetkit_ca_rotation_begun_timestamp_seconds',
    help: 'When the open CA rotation began (Unix time); absent while none is open.',
    registers: [registry],
  })
  const nodes = new Gauge({
    name: 'fleetkit_ca_rotation_nodes',
    help: 'While a CA rotation is open, nodes by state: renewed (connected, holding a new-CA certificate), blocking (connected, without one: --complete is refused), cut_off (not connected, completion revokes their certificates).',
    labelNames: ['state'],
    registers: [registry],
  })
  collectTogether(
    [inProgress, begun, nodes],
    async () => {
      const rotation = await latestRotation(sources.pool)
      const open = rotation?.status === 'begun' ? rotation : undefined
      const progress = open ? await rotationProgress(sources.pool, open.newCaSha256, sources.clock.now()) : undefined
      inProgress.set(open ? 1 : 0)
      begun.reset()
      nodes.reset()
      if (open && progress) {
        begun.set(seconds(open.begunAt))
        nodes.set({ state: 'renewed' }, progress.renewed)
        nodes.set({ state: 'blocking' }, progress.blocking.length)
        nodes.set({ state: 'cut_off' }, progress.cutOff.length)
      }
    },
    (error) => sources.onError('ca rotation', error),
  )
}
