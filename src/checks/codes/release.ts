// Failure codes of signed agent releases: packing, signing, verifying (CLI), and the
// host verifier cloud-init/verify-release.sh, which exits with the same status numbers.
import type { FailureCodeSpec } from '../failure-code-spec.js'

export const RELEASE_CODES = {
  RELEASE_INPUT_INVALID: {
    summary: 'A release input is invalid: version grammar, architecture, URL, a missing input file or size.',
    person: false,
    exitCode: 10,
  },
  RELEASE_TOOL_MISSING: {
    summary: 'A program the release needs (zstd, tar, openssl, curl, sha256sum) is not installed.',
    person: false,
    exitCode: 11,
  },
  RELEASE_DOWNLOAD_FAILED: {
    summary: 'A release file could not be downloaded or read, or it is larger than allowed.',
    person: false,
    exitCode: 12,
  },
  RELEASE_SIGNATURE_INVALID: {
    summary: 'SHA256SUMS.sig is not a valid Ed25519 signature of SHA256SUMS by the pinned release key.',
    person: true,
    exitCode: 13,
  },
  RELEASE_CHECKSUM_MISMATCH: {
    summary: 'The release archive does not match its SHA-256 in the signed SHA256SUMS.',
    person: true,
    exitCode: 14,
  },
  RELEASE_ARCHIVE_UNSAFE: {
    summary: 'The release archive holds something other than one regular file named fleetkit-agent.',
    person: true,
    exitCode: 15,
  },
  RELEASE_VERSION_MISMATCH: {
    summary:
      'The signed release is not the requested version (not listed in SHA256SUMS, or the binary reports another version).',
    person: true,
    exitCode: 16,
  },
  RELEASE_INSTALL_FAILED: {
    summary: 'The verified agent binary could not be written, run or renamed over the target.',
    person: false,
    exitCode: 17,
  },
  RELEASE_KEY_INVALID: {
    summary:
      'The release key is not an Ed25519 key in the expected format (PKCS#8 PEM private key, base64 raw public key).',
    person: false,
    exitCode: 18,
  },
  RELEASE_KEY_UNPROTECTED: {
    summary: 'The release signing key file is readable or writable by group or others.',
    person: false,
    exitCode: 19,
  },
  // 73 is sysexits' EX_CANTCREAT: the output file cannot be created. Never on a host: CLI only.
  RELEASE_KEY_EXISTS: {
    summary:
      'fleetkit release keygen was given a path where a file already is; a key is never overwritten (there is no --force for that).',
    person: false,
    exitCode: 73,
  },
} as const satisfies Record<string, FailureCodeSpec>
