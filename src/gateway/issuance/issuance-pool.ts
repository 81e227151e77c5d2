// Enrollment, renewal and recovery do their CSR verification and certificate signing in a small pool of
// worker threads (issue 12, item 8): about 4 ms of CPU each, which on the event loop stalled heartbeats in a burst.
import { createRequire } from 'node:module'
import { availableParallelism } from 'node:os'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'

import type { IssuingCa } from '../../pki/certificate-authority.js'
import type { IssuedCertificate } from '../../pki/client-certificate.js'
import { csrShapeProblem } from '../../pki/csr.js'

export type IssuanceTask =
  | { id: number; kind: 'ping' }
  | { id: number; kind: 'check'; csrPem: unknown; nodeId: string }
  | {
      id: number
      kind: 'issue'
      ca: { fingerprintSha256: string; certificatePem: string; privateKeyPem: string }
      publicKeyDer: ArrayBuffer
      nodeId: string
      nowMs: number
      lifetimeSeconds: number
    }

export type IssuanceReply =
  | { id: number; kind: 'pong' }
  | { id: number; kind: 'checked'; ok: true; publicKeyDer: ArrayBuffer }
  | { id: number; kind: 'checked'; ok: false; reason: string }
  | {
      id: number
      kind: 'issued'
      certificatePem: string
      fingerprintSha256: string
      serial: string
      notBeforeMs: number
      notAfterMs: number
      issuerCaSha256: string
    }
  | { id: number; kind: 'failed'; message: string }

/** A checked CSR: its subject public key as DER (SubjectPublicKeyInfo), which issuance signs over. */
export type CheckedRequest = { ok: true; publicKeyDer: ArrayBuffer } | { ok: false; reason: string }

export interface IssueRequest {
  ca: IssuingCa
  publicKeyDer: ArrayBuffer
  nodeId: string
  now: Date
  lifetimeSeconds: number
}

/** Worker threads by default: the machine's parallelism less one for the event loop, at least 1, at most 4. */
export function defaultIssuanceWorkers(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1))
}

interface Slot {
  worker: Worker
  pending: Map<number, { resolve: (reply: IssuanceReply) => void; reject: (error: Error) => void }>
}

/**
 * The worker script and how to start it: the compiled `.js` beside this module, or, when running from
 * source under tsx (tests, `bin/dev.js`), the `.ts` file with tsx registered inside the worker first.
 */
function spawnWorker(): Worker {
  const here = import.meta.url
  if (here.endsWith('.ts')) {
    const script = new URL('./issuance-worker.ts', here).href
    // createRequire, not import.meta.resolve (under mocha tsx may load this module as CommonJS); it
    // resolves the package's `require` entry, and the worker needs the `import` one beside it.
    const tsx = pathToFileURL(
      createRequire(here)
        .resolve('tsx/esm/api')
        .replace(/\.cjs$/, '.mjs'),
    ).href
    return new Worker(
      `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(script)}) })`,
      { eval: true },
    )
  }
  return new Worker(new URL('./issuance-worker.js', here))
}

export class IssuancePool {
  private readonly slots: (Slot | undefined)[]
  private nextId = 1
  private closed = false

  constructor(readonly size: number = defaultIssuanceWorkers()) {
    this.slots = Array.from({ length: Math.max(1, size) }, () => undefined)
  }

  /** Parse and verify a CSR (proof of possession, CN and SANs = node id) in a worker. */
  async checkRequest(csrPem: unknown, nodeId: string): Promise<CheckedRequest> {
    // A request that is not even a PEM CSR is refused here: no worker hop for garbage.
    const problem = csrShapeProblem(csrPem)
    if (problem !== undefined) return { ok: false, reason: problem }
    const reply = await this.run({ id: 0, kind: 'check', csrPem, nodeId })
    if (reply.kind !== 'checked') throw new Error('issuance worker answered a check with something else')
    return reply.ok ? { ok: true, publicKeyDer: reply.publicKeyDer } : { ok: false, reason: reply.reason }
  }

  /** Sign a client certificate for `publicKeyDer` with `ca` in a worker (the caller holds the issuance lock). */
  async issue(request: IssueRequest): Promise<IssuedCertificate> {
    const { ca } = request
    const reply = await this.run({
      id: 0,
      kind: 'issue',
      ca: {
        fingerprintSha256: ca.fingerprintSha256,
        certificatePem: ca.certificatePem,
        privateKeyPem: ca.privateKeyPem,
      },
      publicKeyDer: request.publicKeyDer,
      nodeId: request.nodeId,
      nowMs: request.now.getTime(),
      lifetimeSeconds: request.lifetimeSeconds,
    })
    if (reply.kind !== 'issued') throw new Error('issuance worker answered an issuance with something else')
    return {
      certificatePem: reply.certificatePem,
      fingerprintSha256: reply.fingerprintSha256,
      serial: reply.serial,
      notBefore: new Date(reply.notBeforeMs),
      notAfter: new Date(reply.notAfterMs),
      issuerCaSha256: reply.issuerCaSha256,
    }
  }

  /**
   * Start one worker and wait until it has loaded (x509 and the PKI modules): the gateway does it before
   * it listens, so the first enrollment does not pay for it and a start-up's CPU does not land mid-request.
   */
  async warm(): Promise<void> {
    const reply = await this.run({ id: 0, kind: 'ping' })
    if (reply.kind !== 'pong') throw new Error('issuance worker answered a ping with something else')
  }

  /** Worker threads started so far (they start on first use, or by warm()). */
  get started(): number {
    return this.slots.filter((slot) => slot !== undefined).length
  }

  async close(): Promise<void> {
    this.closed = true
    const slots = this.slots.splice(0).filter((slot): slot is Slot => slot !== undefined)
    await Promise.all(slots.map((slot) => slot.worker.terminate()))
  }

  private run(task: IssuanceTask): Promise<IssuanceReply> {
    if (this.closed) return Promise.reject(new Error('the issuance pool is closed'))
    const slot = this.leastBusy()
    const id = this.nextId++
    return new Promise<IssuanceReply>((resolve, reject) => {
      slot.pending.set(id, { resolve, reject })
      slot.worker.postMessage({ ...task, id })
    }).then((reply) => {
      if (reply.kind === 'failed') throw new Error(`issuance worker: ${reply.message}`)
      return reply
    })
  }

  /** The worker with the fewest tasks waiting, started on first use; one that died is replaced. */
  private leastBusy(): Slot {
    let best = -1
    for (let i = 0; i < this.slots.length; i++) {
      const slot = this.slots[i]
      if (!slot) {
        best = i
        break
      }
      if (best < 0 || slot.pending.size < this.slots[best]!.pending.size) best = i
    }
    return this.slots[best] ?? this.startSlot(best)
  }

  private startSlot(index: number): Slot {
    const worker = spawnWorker()
    const slot: Slot = { worker, pending: new Map() }
    this.slots[index] = slot
    // An idle pool must not keep a stopping process alive; a request in progress keeps its socket, which does.
    worker.unref()
    worker.on('message', (reply: IssuanceReply) => {
      const waiter = slot.pending.get(reply.id)
      slot.pending.delete(reply.id)
      waiter?.resolve(reply)
    })
    const fail = (error: Error) => {
      if (this.slots[index] === slot) this.slots[index] = undefined
      for (const waiter of slot.pending.values()) waiter.reject(error)
      slot.pending.clear()
    }
    worker.on('error', fail)
    worker.on('exit', (code) => fail(new Error(`issuance worker exited with code ${code}`)))
    return slot
  }
}
