// Failure codes of the PKI: the CA files, CSRs and certificate issuance.
import type { FailureCodeSpec } from '../failure-code-spec.js'

export const PKI_CODES = {
  CA_KEY_PERMISSIONS: { summary: 'A private key in the PKI directory is readable by group or others or owned by another user, or the directory is writable by group or others; it is refused.', person: true },
  CA_EXISTS: { summary: 'The PKI directory already holds a CA; fleetkit ca init never overwrites one.', person: false },
  CA_MISSING: { summary: 'The PKI directory lacks the CA, bundle or server certificate files.', person: false },
  PKI_INVALID: { summary: 'The PKI files exist but do not form a usable set (bad parse, key mismatch, expired, CA not in bundle).', person: true },
  ENROLLMENT_CSR_INVALID: { summary: 'An enrollment request carried a CSR that does not verify or names something other than the node.', person: false },
  ENROLLMENT_REFUSED: { summary: 'An enrollment was refused: unknown node, wrong, expired or used secret, or node not provisioning.', person: false },
  RENEWAL_NOT_DUE: { summary: 'A certificate renewal was refused because more than a third of the lifetime is left.', person: false },
  RENEWAL_CSR_INVALID: { summary: 'A renewal request carried a CSR that does not verify or names something other than the node.', person: false },
} as const satisfies Record<string, FailureCodeSpec>
