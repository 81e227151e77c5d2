// PKI hot reload: the gateway re-reads its PKI directory every interval; a changed set is
// loaded whole and self-tested before it replaces the running one, and a half-written
// or broken set is logged and ignored, so the previous set keeps serving.
import type { Clock } from '../config/clock.js'
import { buildPkiSet, type PkiSet } from '../pki/pki-set.js'
import { readPkiDirectory } from '../pki/pki-files.js'
import { sha256Hex } from '../pki/fingerprint.js'
import type { Logger } from '../log/logger.js'

export type ReloadOutcome = 'unchanged' | 'replaced' | 'kept'

export interface PkiReloaderOptions {
  dir: string
  clock: Clock
  logger: Logger
  current(): PkiSet
  apply(set: PkiSet): void
  intervalMs?: number
}

export class PkiReloader {
  private timer: ReturnType<typeof setInterval> | undefined
  private running: Promise<ReloadOutcome> | undefined
  /** The version last refused, so a broken set is logged once, not every interval. */
  private refusedVersion: string | undefined

  constructor(private readonly options: PkiReloaderOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.check(), this.options.intervalMs ?? 2000)
    this.timer.unref()
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
  }

  /** Look once; never two looks at a time. */
  check(): Promise<ReloadOutcome> {
    this.running ??= this.look().finally(() => { this.running = undefined })
    return this.running
  }

  private async look(): Promise<ReloadOutcome> {
    let version: string | undefined
    try {
      const files = await readPkiDirectory(this.options.dir)
      version = sha256Hex([files.caCertificate, files.caKey, files.bundle, files.serverCertificate, files.serverKey].join('\0'))
      if (version === this.options.current().version || version === this.refusedVersion) return 'unchanged'
      const set = await buildPkiSet(this.options.dir, files, this.options.clock.now())
      this.options.apply(set)
      this.refusedVersion = undefined
      return 'replaced'
    } catch (error) {
      const key = version ?? `error:${(error as { code?: string }).code ?? ''}:${(error as Error).message}`
      if (key !== this.refusedVersion) {
        this.refusedVersion = key
        this.options.logger('warn', 'pki_set_not_loaded', { kept: 'the running set', dir: this.options.dir, code: (error as { code?: string }).code, error: (error as Error).message })
      }
      return 'kept'
    }
  }
}
