// What `fleetkit ca rotate` reports (each phase's result, the same shape for --json and the terminal) and the
// coded refusals of its phases; src/lifecycle/ca/ca-rotation.ts runs the phases.
import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { NewPkiFile } from '../../pki/pki-files.js'
import type { CaRotationRow, NodeOnOldCa, RotationProgress } from '../../store/pki/ca-rotations.js'

export type RotatePhase = 'begin' | 'complete' | 'abort' | 'status'

interface RotationNode {
  /** @minLength 1 */
  nodeId: string
  status: string
  /** @format date-time */
  notAfter: string | null
  /**
   * A new-CA certificate was issued to it but its agent never authenticated with it (the renewal's answer
   * was lost); its agent still uses the old one and renews again at its next check.
   */
  unusedNewCertificate: boolean
}

export interface CaRotateResult {
  phase: RotatePhase
  dryRun: boolean
  /** @minLength 1 */
  pkiDir: string
  /** @pattern ^[0-9a-f]{64}$ */
  currentCaSha256: string
  rotation: {
    state: 'none' | 'begun' | 'completed' | 'aborted'
    /** @pattern ^[0-9a-f]{64}$ */
    oldCaSha256: string | null
    /** @pattern ^[0-9a-f]{64}$ */
    newCaSha256: string | null
    /** @format date-time */
    begunAt: string | null
    /** @format date-time */
    finishedAt: string | null
  }
  /** While a rotation is begun (and in a completion's preview): where the fleet stands. */
  progress: {
    /**
     * @minimum 0
     * @asType integer
     */
    connected: number
    /**
     * Connected nodes that moved: the gateway saw them authenticate with a new-CA certificate.
     * @minimum 0
     * @asType integer
     */
    renewed: number
    blocking: RotationNode[]
    cutOff: RotationNode[]
  } | null
  abortPossible: boolean
  completePossible: boolean
  /**
   * Certificates a completion revoked (old-CA ones), or an abort revoked (new-CA ones no agent ever used); 0 for
   * the other phases and for a dry run.
   * @minimum 0
   * @asType integer
   */
  revoked: number
  /** PKI files this run wrote (none for --status and --dry-run). */
  filesWritten: string[]
  /** Temp files a killed earlier PKI command had left, removed by this run. */
  removedTempFiles: string[]
  /** True when this run finished an earlier run's half-done work (a begin, a completion or an abort). */
  resumed: boolean
}

export function notStarted(phase: 'complete' | 'abort'): FleetkitError {
  return new FleetkitError('CA_ROTATION_NOT_STARTED', `there is no begun CA rotation to ${phase}`, {
    actions: ['fleetkit ca rotate --status', 'fleetkit ca rotate --begin'],
  })
}

export function notTheNewCa(pkiDir: string, rotation: CaRotationRow, currentSha: string): FleetkitError {
  return new FleetkitError(
    'PKI_INVALID',
    `${pkiDir}/ca.pem (${currentSha.slice(0, 16)}…) is not the rotation's new CA (${rotation.newCaSha256.slice(0, 16)}…)`,
    {
      actions: ['fleetkit ca rotate --status', 'restore the PKI directory from backup'],
      data: { dir: pkiDir, problem: 'ca.pem is not the new CA' },
    },
  )
}

export function incomplete(progress: RotationProgress, abortPossible: boolean): FleetkitError {
  const shown = progress.blocking.slice(0, 20).map((n) => n.nodeId)
  const more = progress.blocking.length > shown.length ? ` and ${progress.blocking.length - shown.length} more` : ''
  const unused = progress.blocking.filter((n) => n.unusedNewCertificate).length
  return new FleetkitError(
    'CA_ROTATION_INCOMPLETE',
    `${progress.blocking.length} of ${progress.connected} connected nodes have not moved onto the new CA (the gateway has not seen them use a new-CA certificate): ${shown.join(', ')}${more}` +
      (unused > 0 ? `; ${unused} of them were issued one their agent never used (a lost renewal answer)` : '') +
      '; completing now would cut them off',
    {
      actions: [
        'fleetkit ca rotate --status --wait',
        'fleetkit-agent doctor (on a listed node that does not renew)',
        'fleetkit ca rotate --complete',
        ...(abortPossible ? ['fleetkit ca rotate --abort (no node moved yet: the old CA comes back)'] : []),
        'fleetkit ca rotate --complete --force (cuts the listed nodes off)',
      ],
      data: {
        nodes: progress.blocking.map(nodeOf),
        renewed: progress.renewed,
        connected: progress.connected,
        abortPossible,
      },
    },
  )
}

function nodeOf(node: NodeOnOldCa): RotationNode {
  return {
    nodeId: node.nodeId,
    status: node.status,
    notAfter: node.notAfter ? node.notAfter.toISOString() : null,
    unusedNewCertificate: node.unusedNewCertificate,
  }
}

export function names(files: readonly NewPkiFile[]): string[] {
  return files.map((f) => f.name)
}

export function result(
  options: { phase: RotatePhase; dryRun?: boolean; pkiDir: string },
  parts: {
    currentCaSha256: string
    rotation: CaRotationRow | undefined
    removedTempFiles?: string[]
    progress?: RotationProgress | null
    abortPossible?: boolean
    completePossible?: boolean
    revoked?: number
    filesWritten?: string[]
    resumed?: boolean
  },
): CaRotateResult {
  const r = parts.rotation
  return {
    phase: options.phase,
    dryRun: options.dryRun ?? false,
    pkiDir: options.pkiDir,
    currentCaSha256: parts.currentCaSha256,
    rotation: {
      state: r?.status ?? 'none',
      oldCaSha256: r?.oldCaSha256 ?? null,
      newCaSha256: r?.newCaSha256 ?? null,
      begunAt: r ? r.begunAt.toISOString() : null,
      finishedAt: r?.finishedAt ? r.finishedAt.toISOString() : null,
    },
    progress: parts.progress
      ? {
          connected: parts.progress.connected,
          renewed: parts.progress.renewed,
          blocking: parts.progress.blocking.map(nodeOf),
          cutOff: parts.progress.cutOff.map(nodeOf),
        }
      : null,
    abortPossible: parts.abortPossible ?? false,
    completePossible: parts.completePossible ?? false,
    revoked: parts.revoked ?? 0,
    filesWritten: parts.filesWritten ?? [],
    removedTempFiles: parts.removedTempFiles ?? [],
    resumed: parts.resumed ?? false,
  }
}
