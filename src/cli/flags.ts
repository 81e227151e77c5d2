// The flags several commands share, declared once so that each has one name, one short
// form, one environment variable and one default everywhere: --definition/-d and --state-dir.
import { resolve } from 'node:path'

import { Flags } from '@oclif/core'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { GATEWAY_ENV_FILE } from '../config/gateway-env-file.js'
import type { Env } from '../config/state-dir.js'
import { resolvePkiDir } from '../pki/pki-dir.js'

const DEFAULT_DEFINITION = './fleet.yaml'

/** --definition/-d (FLEETKIT_DEFINITION): the fleet definition a command reads. */
export function definitionFlag(summary = 'Path of the fleet definition (YAML or JSON).') {
  return Flags.string({
    char: 'd',
    summary,
    env: 'FLEETKIT_DEFINITION',
    default: DEFAULT_DEFINITION,
    helpValue: 'PATH',
  })
}

/** Where the state is when neither --state-dir nor FLEETKIT_STATE_DIR says (resolveStateDir, docs/state.md). */
export const STATE_DIR_DEFAULT =
  '/var/lib/fleetkit when the gateway service shares it with you, else $XDG_STATE_HOME/fleetkit, else ~/.local/state/fleetkit (root: /var/lib/fleetkit)'

/** --state-dir (FLEETKIT_STATE_DIR): the embedded PostgreSQL, and the PKI unless FLEETKIT_PKI_DIR names another. */
export function stateDirFlag(
  summary = `The state directory: the embedded PostgreSQL and, by default, the PKI (default: ${STATE_DIR_DEFAULT}).`,
) {
  return Flags.string({ summary, env: 'FLEETKIT_STATE_DIR', helpValue: 'DIR' })
}

/** `--gateway-env FILE`: the gateway unit's environment file, which the off-host archive's kit carries. */
export function gatewayEnvFlag(summary: string) {
  return Flags.string({ summary, default: GATEWAY_ENV_FILE, helpValue: 'FILE' })
}

/**
 * The environment a library call reads, with --state-dir laid over it: the libraries resolve the
 * state directory (and the PKI directory under it) from FLEETKIT_STATE_DIR, so the flag and the
 * variable mean the same thing on every command.
 */
export function envWithStateDir(stateDir: string | undefined, env: Env = process.env): Env {
  return stateDir === undefined || stateDir.trim() === '' ? env : { ...env, FLEETKIT_STATE_DIR: stateDir }
}

/** `{stateDir}` for the store functions that take it, nothing when the flag is unset. */
export function stateDirOption(stateDir: string | undefined): { stateDir?: string } {
  return stateDir === undefined || stateDir.trim() === '' ? {} : { stateDir }
}

/** A parsed token as oclif's `raw` output lists it. */
export interface RawToken {
  type: string
  flag?: string
}

/**
 * The definition path of a command that also takes it as a positional FILE. A FILE and a
 * --definition on the same command line that disagree is a usage error (which one was meant?);
 * a FILE wins over FLEETKIT_DEFINITION, which is only a default.
 */
export function chooseDefinitionPath(options: {
  file: string | undefined
  flag: string
  raw: readonly RawToken[]
  commandId: string
}): string {
  const { file, flag } = options
  if (file === undefined) return flag
  const flagOnCommandLine = options.raw.some((token) => token.type === 'flag' && token.flag === 'definition')
  if (flagOnCommandLine && resolve(file) !== resolve(flag)) {
    throw new FleetkitError(
      'USAGE_INVALID',
      `the definition is named twice and the two disagree: FILE ${file} and --definition ${flag}; give one`,
      {
        actions: [
          `fleetkit ${options.commandId.replaceAll(':', ' ')} --definition ${file}`,
          `fleetkit help ${options.commandId.replaceAll(':', ' ')}`,
        ],
        data: { file, definition: flag },
      },
    )
  }
  return file
}

/** --yes/-y: confirm an irreversible step beforehand (src/cli/confirm.ts); a script must pass it. */
export function yesFlag(
  summary = 'Confirm beforehand instead of being asked; needed without a terminal and with --json.',
) {
  return Flags.boolean({ char: 'y', summary, default: false })
}

/** `--pki-dir` (FLEETKIT_PKI_DIR), declared once. */
export function pkiDirFlag() {
  return Flags.string({ summary: 'The PKI directory (default <state dir>/pki).', env: 'FLEETKIT_PKI_DIR' })
}

/** The PKI directory a command uses: --pki-dir (or FLEETKIT_PKI_DIR), else <state dir>/pki. */
export function pkiDirOf(flags: { 'pki-dir'?: string | undefined; 'state-dir'?: string | undefined }): string {
  return flags['pki-dir']
    ? resolvePkiDir({ FLEETKIT_PKI_DIR: flags['pki-dir'] })
    : resolvePkiDir(envWithStateDir(flags['state-dir']))
}

/**
 * --mitogen/--no-mitogen (FLEETKIT_SYNC_MITOGEN) and --strategy (FLEETKIT_SYNC_STRATEGY): how `sync` and `drift`
 * drive Ansible. Resolved here, by the command, so the sync library reads no environment of its own.
 */
export function ansibleSpeedFlags() {
  return {
    mitogen: Flags.boolean({
      summary: 'Use the mitogen strategy when ansible-mitogen is installed (default); --no-mitogen for plain SSH.',
      env: 'FLEETKIT_SYNC_MITOGEN',
      allowNo: true,
      default: true,
    }),
    strategy: Flags.string({
      summary: "Ansible's strategy: free (each host at its own pace) or linear (every host in lock-step).",
      env: 'FLEETKIT_SYNC_STRATEGY',
      options: ['free', 'linear'] as const,
      default: 'free',
    }),
  }
}

/** The sync options --mitogen and --strategy resolve to. */
export function ansibleSpeedOptions(flags: { mitogen: boolean; strategy: string }): {
  noMitogen: boolean
  strategy: 'free' | 'linear'
} {
  return { noMitogen: !flags.mitogen, strategy: flags.strategy === 'linear' ? 'linear' : 'free' }
}
