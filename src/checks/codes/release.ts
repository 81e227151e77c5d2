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
  // 73 again: the version directory exists; replacing published bytes is a decision, hence a person.
  RELEASE_ALREADY_PUBLISHED: {
    summary:
      'fleetkit release publish found that version already published with other bytes; it is replaced only with --replace.',
    person: true,
    exitCode: 73,
  },
  // 75 is sysexits' EX_TEMPFAIL: try again once the other publish is done.
  RELEASE_PUBLISH_BUSY: {
    summary:
      "Another fleetkit release publish held the state directory's releases lock longer than this one waits; nothing was published.",
    person: false,
    exitCode: 75,
  },
  // The gateway's answer (HTTP 404) to a release path with nothing published there; a host's verifier reports RELEASE_DOWNLOAD_FAILED.
  RELEASE_NOT_FOUND: {
    summary:
      'The gateway has no such release file: that version was not published in its state directory (fleetkit release publish).',
    person: false,
  },
} as const satisfies Record<string, FailureCodeSpec>
