// PKI hot reload: the gateway re-reads its PKI directory every interval; a changed set is
// loaded whole and self-tested before it replaces the running one, and a half-written, broken
// or foreign set (one that no longer trusts a live certificate's CA) is logged and ignored. Files whose
// stat has not changed since the last look are not read again (stat-signature.ts).
import { join } from 'node:path'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { Clock } from '../../config/clock.js'
import { buildPkiSet, type PkiSet } from '../../pki/pki-set.js'
import { PKI_FILE_NAMES, type PkiFileText, readPkiDirectory } from '../../pki/pki-files.js'
import { statSignature } from '../../fs/stat-signature.js'
import { sha256Hex } from '../../pki/fingerprint.js'
import type { Logger } from '../../log/logger.js'

export type ReloadOutcome = 'unchanged' | 'replaced' | 'kept'

export interface PkiReloaderOptions {
  dir: string
  clock: Clock
  logger: Logger
  current(): PkiSet
  apply(set: PkiSet): void
  /**
   * The CAs that issued a certificate still in use: a new bundle must keep trusting each, or it would
   * cut those agents off (a foreign set, a hand-edited bundle). Omitted: not checked.
   */
  liveIssuers?: (now: Date) => Promise<string[]>
  intervalMs?: number
  /** Reads the directory's files (injected by tests, to count the reads). */
  read?: (dir: string) => Promise<PkiFileText>
}

export class PkiReloader {
  private timer: ReturnType<typeof setInterval> | undefined
  private running: Promise<ReloadOutcome> | undefined
  /** The version last refused, so a broken set is logged once, not every interval. */
  private refusedVersion: string | undefined
  /** The refusal last logged, so each is logged once. */
  private loggedRefusal: string | undefined
  /** The files' stat signature at the last look that needs no repeating (unchanged, replaced, refused for good). */
  private settled: string | undefined

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
    this.running ??= this.look().finally(() => {
      this.running = undefined
    })
    return this.running
  }

  private async look(): Promise<ReloadOutcome> {
    // Taken before the read: a change after it shows in the next look's signature, which then reads again.
    const signature = await statSignature(this.watched(), this.options.clock.now().getTime())
    if (signature !== undefined && signature === this.settled) return 'unchanged'
    this.settled = undefined
    const { outcome, again } = await this.read()
    if (!again) this.settled = signature
    return outcome
  }

  /** The directory (its mode; files made or removed) and each file the set is read from. */
  private watched(): string[] {
    const { dir } = this.options
    return [dir, ...Object.values(PKI_FILE_NAMES).map((name) => join(dir, name))]
  }

  /** The set read and judged; `again` when the same files must be judged again (a refusal for the state). */
  private async read(): Promise<{ outcome: ReloadOutcome; again: boolean }> {
    let version: string | undefined
    try {
      const files = await (this.options.read ?? readPkiDirectory)(this.options.dir)
      version = sha256Hex(
        [files.caCertificate, files.caKey, files.bundle, files.serverCertificate, files.serverKey].join('\0'),
      )
      if (version === this.options.current().version || version === this.refusedVersion)
        return { outcome: 'unchanged', again: false }
      const now = this.options.clock.now()
      const set = await buildPkiSet(this.options.dir, files, now)
      await this.assertTrustsLiveIssuers(set, now)
      this.options.apply(set)
      this.refusedVersion = undefined
      this.loggedRefusal = undefined
      return { outcome: 'replaced', again: false }
    } catch (error) {
      const code = (error as { code?: string }).code
      const key = version ?? `error:${code ?? ''}:${(error as Error).message}`
      if (key !== this.loggedRefusal) {
        this.loggedRefusal = key
        this.options.logger('warn', 'pki_set_not_loaded', {
          kept: 'the running set',
          dir: this.options.dir,
          code,
          error: (error as Error).message,
        })
      }
      // A set that fails its own checks fails them every time; one refused for the state (live
      // certificates of a CA it drops, a database error) is looked at again: the state changes.
      const forGood = code !== 'PKI_SET_UNTRUSTED' && !isStateError(error)
      if (forGood) this.refusedVersion = key
      return { outcome: 'kept', again: !forGood }
    }
  }

  private async assertTrustsLiveIssuers(set: PkiSet, now: Date): Promise<void> {
    if (!this.options.liveIssuers) return
    const missing = (await this.options.liveIssuers(now)).filter((sha) => !set.bundleFingerprints.includes(sha))
    if (missing.length === 0) return
    throw new FleetkitError(
      'PKI_SET_UNTRUSTED',
      `the changed ca-bundle.pem in ${set.dir} does not trust ${missing.length} CA(s) that issued certificates still in use (${missing.map((m) => m.slice(0, 16)).join(', ')}); keeping the running set`,
      {
        actions: ['fleetkit ca rotate --status', 'put back the PKI files the gateway was serving'],
        data: { dir: set.dir, missing },
      },
    )
  }
}

/** Errors of the liveIssuers query (pg errors carry a SQLSTATE, connection errors an errno), not of the files. */
function isStateError(error: unknown): boolean {
  return !(error instanceof FleetkitError)
}
