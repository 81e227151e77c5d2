// The TLS session ticket keys, kept with the PKI: every gateway reading the same PKI directory
// (or one restarted) decrypts the tickets the others issued, so a reconnect storm after a
// restart costs resumed handshakes instead of full ones, and agents resume their sessions.
// `fleetkit gateway rotate-ticket-keys` replaces them (forward secrecy for resumed sessions); each
// running gateway looks at the file every PKI reload interval (its stat; the file is read again when that
// changed) and serves the new keys from then on.
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { basename, join } from 'node:path'

import { type Clock, systemClock } from '../../config/clock.js'
import { statSignature } from '../../fs/stat-signature.js'
import type { Logger } from '../../log/logger.js'
import { createPkiFileOnce, readPkiDirectory, writePkiFiles } from '../../pki/pki-files.js'

/** Node's ticketKeys: 16 bytes name, 16 bytes HMAC secret, 16 bytes AES key. */
const TICKET_KEYS_BYTES = 48

export function ticketKeysPath(pkiDir: string): string {
  return join(pkiDir, 'tls-ticket-keys')
}

/** The keys' name (the first 16 bytes, which every ticket carries in the clear): what a log line may show. */
function ticketKeyName(keys: Buffer): string {
  return keys.subarray(0, 16).toString('hex')
}

/**
 * The ticket keys in `pkiDir`, created when missing as the PKI's secrets are written (a temp file beside
 * it, 0600, fsynced) and published by a link, so of two gateways starting together one creates them and
 * both read the same, and a crash or a full disk leaves no file or a whole one, never a short one at the
 * name. A file of the wrong size (cut short by an older fleetkit, which wrote it in place) is replaced whole.
 */
export async function loadOrCreateTicketKeys(pkiDir: string): Promise<Buffer> {
  const path = ticketKeysPath(pkiDir)
  const found = await readFile(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined
    throw error
  })
  if (found?.length === TICKET_KEYS_BYTES) return found
  const file = { name: basename(path), content: randomBytes(TICKET_KEYS_BYTES), mode: 0o600 }
  if (found === undefined) await createPkiFileOnce(pkiDir, file)
  else await writePkiFiles(pkiDir, [file])
  const keys = await readFile(path)
  if (keys.length !== TICKET_KEYS_BYTES) throw new Error(`${path} holds ${keys.length} bytes, not ${TICKET_KEYS_BYTES}`)
  return keys
}

export interface TicketKeyRotation {
  path: string
  /** The new keys' name (hex): gateways log it as they take the keys up (`ticket_keys_replaced`). */
  keyName: string
}

/**
 * New keys, written as the PKI files are (a hidden temp file beside the file, 0600, fsynced, renamed
 * over it; removed on any failure; root gives it to the directory's owner, the account a gateway
 * installed as a service reads it as): a gateway reading at any moment reads the old keys or the new
 * ones, never half of either.
 */
export async function rotateTicketKeys(pkiDir: string): Promise<TicketKeyRotation> {
  // The directory a gateway serves from (CA_MISSING, PKI_DIR_PERMISSIONS ... otherwise), not a stray one.
  await readPkiDirectory(pkiDir)
  const path = ticketKeysPath(pkiDir)
  const keys = randomBytes(TICKET_KEYS_BYTES)
  await writePkiFiles(pkiDir, [{ name: basename(path), content: keys, mode: 0o600 }])
  return { path, keyName: ticketKeyName(keys) }
}

export interface TicketKeyKeeperOptions {
  pkiDir: string
  logger: Logger
  apply: (keys: Buffer) => void
  intervalMs: number
  clock?: Clock
  /** Reads the file (injected by tests, to count the reads). */
  read?: (path: string) => Promise<Buffer>
}

/**
 * Serves the keys of the file: read at start, looked at on each check (read again when its stat changed),
 * applied when they changed.
 */
export class TicketKeyKeeper {
  private timer: ReturnType<typeof setInterval> | undefined
  /** The refusal last logged (a file of the wrong size, an unreadable file), so each is logged once. */
  private refused: string | undefined
  /** The file's stat signature when it was last read (stat-signature.ts). */
  private settled: string | undefined

  private constructor(
    private readonly options: TicketKeyKeeperOptions,
    public current: Buffer,
  ) {}

  static async open(options: TicketKeyKeeperOptions): Promise<TicketKeyKeeper> {
    return new TicketKeyKeeper(options, await loadOrCreateTicketKeys(options.pkiDir))
  }

  start(): void {
    this.timer = setInterval(() => void this.check(), this.options.intervalMs)
    this.timer.unref()
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
  }

  /** Reads the file once: 'replaced' when it holds other keys, 'kept' when it cannot be used. */
  async check(): Promise<'unchanged' | 'replaced' | 'kept'> {
    const path = ticketKeysPath(this.options.pkiDir)
    // Taken before the read: a change after it shows in the next check's signature, which then reads again.
    const signature = await statSignature([path], (this.options.clock ?? systemClock).now().getTime())
    if (signature !== undefined && signature === this.settled) return 'unchanged'
    this.settled = signature
    let keys: Buffer
    try {
      keys = await (this.options.read ?? readFile)(path)
      if (keys.length !== TICKET_KEYS_BYTES)
        throw new Error(`${path} holds ${keys.length} bytes, not ${TICKET_KEYS_BYTES}`)
    } catch (error) {
      // A file of the wrong size stays wrong until it changes; a failed read (EMFILE, EIO) is tried again.
      if ((error as NodeJS.ErrnoException).code !== undefined) this.settled = undefined
      const message = (error as Error).message
      if (message !== this.refused) {
        this.refused = message
        this.options.logger('warn', 'ticket_keys_not_loaded', { kept: 'the running keys', error: message })
      }
      return 'kept'
    }
    this.refused = undefined
    if (keys.equals(this.current)) return 'unchanged'
    this.current = keys
    this.options.apply(keys)
    this.options.logger('info', 'ticket_keys_replaced', { key_name: ticketKeyName(keys) })
    return 'replaced'
  }
}
