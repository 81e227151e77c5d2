// Failure codes of the PKI: the CA files, CSRs and certificate issuance.
import type { FailureCodeSpec } from '../failure-code-spec.js'

export const PKI_CODES = {
  CA_KEY_PERMISSIONS: {
    summary:
      'A private key in the PKI directory is readable by group or others or owned by another user, or the directory is writable by group or others; it is refused.',
    person: true,
  },
  CA_EXISTS: { summary: 'The PKI directory already holds a CA; fleetkit ca init never overwrites one.', person: false },
  PKI_BUSY: {
    summary:
      'Another fleetkit command (ca init, ca rotate, ca server-cert, db backup, db restore) held the PKI directory longer than this one waits; nothing was changed.',
    person: false,
  },
  CA_MISSING: { summary: 'The PKI directory lacks the CA, bundle or server certificate files.', person: false },
  PKI_INVALID: {
    summary: 'The PKI files exist but do not form a usable set (bad parse, key mismatch, expired, CA not in bundle).',
    person: true,
  },
  ENROLLMENT_CSR_INVALID: {
    summary: 'An enrollment request carried a CSR that does not verify or names something other than the node.',
    person: false,
  },
  ENROLLMENT_REFUSED: {
    summary: 'An enrollment was refused: unknown node, wrong, expired or used secret, or node not provisioning.',
    person: false,
  },
  RENEWAL_NOT_DUE: {
    summary: 'A certificate renewal was refused because more than a third of the lifetime is left.',
    person: false,
  },
  RENEWAL_CSR_INVALID: {
    summary: 'A renewal request carried a CSR that does not verify or names something other than the node.',
    person: false,
  },
  PKI_KEY_WITHOUT_CERTIFICATE: {
    summary:
      'The PKI directory holds ca.key or server.key without its certificate: an interrupted fleetkit ca init or a lost file.',
    person: true,
  },
  PKI_SET_UNTRUSTED: {
    summary:
      'A changed PKI set was not loaded because its bundle no longer trusts a CA that issued a certificate still in use (a foreign or wrongly rotated set); the running set keeps serving.',
    person: true,
  },
  CA_ROTATION_IN_PROGRESS: {
    summary: 'fleetkit ca rotate --begin found a rotation already begun; complete or abort it first.',
    person: false,
  },
  CA_ROTATION_NOT_STARTED: {
    summary: 'fleetkit ca rotate --complete or --abort found no rotation begun.',
    person: false,
  },
  CA_ROTATION_INCOMPLETE: {
    summary:
      'fleetkit ca rotate --complete was refused: connected nodes have not used a certificate from the new CA yet (they are listed); --force cuts them off.',
    person: false,
  },
  CA_ROTATION_ABORT_REFUSED: {
    summary:
      'fleetkit ca rotate --abort was refused: nodes already moved onto the new CA (their old certificates are revoked), so only --complete can end the rotation.',
    person: false,
  },
  ISSUING_CA_RETIRED: {
    summary:
      'The gateway was about to issue from a CA whose rotation was aborted or completed; it refused and serves the current CA after its next PKI reload (seconds).',
    person: false,
  },
  RECOVERY_REFUSED: {
    summary:
      "A node's recovery by a signed challenge was refused: unknown node, wrong state (retired, lost), bad signature or challenge, or a certificate that is not its latest.",
    person: false,
  },
  RECOVERY_WINDOW_EXPIRED: {
    summary:
      "A node's certificate expired longer ago than the recovery window; it needs a new single-use enrollment secret.",
    person: false,
  },
} as const satisfies Record<string, FailureCodeSpec>
