// What a `fleetkit db restore` killed between its database commit and its PKI rename leaves beside the
// PKI directory: the restored PKI staged in `<pki>.restore-<12 hex>/`, the directory kept aside by
// --force in `<pki>.before-restore-<time>/`, and no `<pki>/`. A CA_MISSING then must not advise
// `fleetkit ca init`: a new CA would leave every restored certificate untrusted.
import { readdir } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'

function escaped(name: string): string {
  return name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** `<pki>.restore-<12 hex>` (a restore's staged PKI) and `<pki>.restore-lock-<12 hex>` (the lock-only directory it replaces). */
export function restoreStagingPattern(pkiDir: string): RegExp {
  return new RegExp(`^${escaped(basename(pkiDir))}\\.restore-(lock-)?[0-9a-f]{12}$`)
}

/** The restore's directories beside `pkiDir` that hold a PKI: staged ones and ones kept aside by --force. */
async function restoreLeftoversBeside(pkiDir: string): Promise<string[]> {
  const held = new RegExp(`^${escaped(basename(pkiDir))}\\.(restore-[0-9a-f]{12}|before-restore-[0-9A-Za-z-]+)$`)
  const names = await readdir(dirname(pkiDir)).catch(() => [] as string[])
  return names
    .filter((name) => held.test(name))
    .sort()
    .map((name) => join(dirname(pkiDir), name))
}

/**
 * The one CA_MISSING, for every place that finds the PKI directory `pkiDir` without its CA: `message`
 * (what is missing) with `actions` (`fleetkit ca init` ...), unless a restore's directory sits beside
 * `pkiDir`: then the error names that directory and advises the restore again, never `ca init`.
 */
export async function caMissingError(
  pkiDir: string,
  message: string,
  advice: { actions: string[]; data: Record<string, unknown> },
): Promise<FleetkitError> {
  const leftovers = await restoreLeftoversBeside(pkiDir)
  if (leftovers.length === 0) return new FleetkitError('CA_MISSING', message, advice)
  return new FleetkitError(
    'CA_MISSING',
    `${message}, and ${leftovers.join(', ')} beside it ${leftovers.length === 1 ? 'holds' : 'hold'} the PKI of a db restore that did not finish (a new CA would leave every restored certificate untrusted)`,
    {
      actions: [
        'fleetkit db restore BACKUP --force   (BACKUP: the file that was being restored; its database is in place, and the run puts its PKI beside it)',
      ],
      data: { ...advice.data, leftovers },
    },
  )
}
