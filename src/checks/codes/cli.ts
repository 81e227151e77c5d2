// Failure codes of the CLI itself: usage mistakes and fleetkit's own bugs.
import type { FailureCodeSpec } from '../failure-code-spec.js'

export const CLI_CODES = {
  USAGE_INVALID: {
    summary: 'The command line has an unknown flag, a missing argument or a bad value.',
    person: false,
    exitCode: 2,
  },
  INTERNAL_ERROR: { summary: 'fleetkit hit a bug: an error it did not expect.', person: true, exitCode: 70 },
  FILESYSTEM_WRITE_FAILED: {
    summary:
      'A local file could not be written: its filesystem is full (ENOSPC), over quota (EDQUOT), read-only (EROFS) or failing (EIO), or a directory could not be made where its path said (ENOTDIR, EEXIST, ENOENT; a TMPDIR that names no directory); the command stopped there.',
    person: false,
    exitCode: 74,
  },
  FILESYSTEM_PERMISSION_DENIED: {
    summary:
      'This user may not open, create or remove a local file the command needs (EACCES, EPERM), such as a CA key of a state shared with the gateway service; the command stopped there.',
    person: false,
    exitCode: 77,
  },
  SECRET_OUTPUT_IN_GIT: {
    summary:
      'A file that holds a secret (a seed, a private key) was to be written inside a Git work tree that does not ignore it; nothing was written. --force writes it there anyway.',
    person: false,
    exitCode: 2,
  },
  RUNBOOK_CODE_UNKNOWN: { summary: 'No failure code of that name is registered.', person: false },
  COMMAND_UNKNOWN: { summary: 'No fleetkit command of that name exists.', person: false, exitCode: 2 },
  // 130 is 128 + SIGINT; after SIGTERM the process exits 143 (128 + 15) with the same code.
  COMMAND_INTERRUPTED: {
    summary:
      'Ctrl-C or SIGTERM stopped the command after it ended its child processes and removed its temporary files.',
    person: false,
    exitCode: 130,
  },
  CONFIRMATION_REQUIRED: {
    summary:
      'An irreversible command (decommission, a reissue or rekey of a live node) was not confirmed: no terminal to ask on, or --json, and no --yes.',
    person: false,
    exitCode: 2,
  },
  CONFIRMATION_DECLINED: {
    summary: 'An irreversible command asked on the terminal and was answered no (or got no answer); nothing changed.',
    person: false,
  },
} as const satisfies Record<string, FailureCodeSpec>
