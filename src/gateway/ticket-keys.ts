// The TLS session ticket keys, kept with the PKI: every gateway reading the same PKI directory
// (or one restarted) decrypts the tickets the others issued, so a reconnect storm after a
// restart costs resumed handshakes instead of full ones, and agents resume their sessions.
import { randomBytes } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

/** Node's ticketKeys: 16 bytes name, 16 bytes HMAC secret, 16 bytes AES key. */
const TICKET_KEYS_BYTES = 48

export function ticketKeysPath(pkiDir: string): string {
  return join(pkiDir, 'tls-ticket-keys')
}

/**
 * The ticket keys in `pkiDir`, created (0600, exclusively: of two gateways starting together one
 * writes, both read the same) when missing. A file of the wrong size is replaced.
 */
export async function loadOrCreateTicketKeys(pkiDir: string): Promise<Buffer> {
  const path = ticketKeysPath(pkiDir)
  for (let attempt = 1; ; attempt++) {
    try {
      const keys = await readFile(path)
      if (keys.length === TICKET_KEYS_BYTES) return keys
      if (attempt > 1) throw new Error(`${path} holds ${keys.length} bytes, not ${TICKET_KEYS_BYTES}`)
      await writeFile(path, randomBytes(TICKET_KEYS_BYTES), { mode: 0o600 })
      continue
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt > 2) throw error
    }
    try {
      await writeFile(path, randomBytes(TICKET_KEYS_BYTES), { mode: 0o600, flag: 'wx' })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
  }
}
