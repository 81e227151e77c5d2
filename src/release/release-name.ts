// The names of a release: the version grammar, the architecture enum and the archive
// file name. The version ends up in URLs, file names and shell, so the grammar admits no metacharacters.
import { FleetkitError } from '../checks/fleetkit-error.js'
import { GRAMMAR } from '../definition/grammar.js'

export const RELEASE_ARCHITECTURES = ['amd64', 'arm64'] as const
export type ReleaseArchitecture = (typeof RELEASE_ARCHITECTURES)[number]

/** MAJOR.MINOR.PATCH with an optional -prerelease of [0-9A-Za-z.-]; the one grammar fleet.yaml's release.version uses too. */
const RELEASE_VERSION_PATTERN = new RegExp(GRAMMAR.releaseVersion.pattern, 'u')
const RELEASE_VERSION_MAX_LENGTH = GRAMMAR.releaseVersion.maxLength

export const AGENT_ENTRY_NAME = 'fleetkit-agent'
export const SUMS_FILE = 'SHA256SUMS'
export const SIGNATURE_FILE = 'SHA256SUMS.sig'

export function isReleaseVersion(value: string): boolean {
  return value.length <= RELEASE_VERSION_MAX_LENGTH && RELEASE_VERSION_PATTERN.test(value)
}

export function assertReleaseVersion(value: string): string {
  if (!isReleaseVersion(value)) {
    throw new FleetkitError(
      'RELEASE_INPUT_INVALID',
      `version ${JSON.stringify(value)} is not MAJOR.MINOR.PATCH[-PRERELEASE] (letters, digits, "." and "-", at most ${RELEASE_VERSION_MAX_LENGTH} characters)`,
      {
        data: { expected: RELEASE_VERSION_PATTERN.source, actual: value },
      },
    )
  }
  return value
}

function isReleaseArchitecture(value: string): value is ReleaseArchitecture {
  return (RELEASE_ARCHITECTURES as readonly string[]).includes(value)
}

export function assertReleaseArchitecture(value: string): ReleaseArchitecture {
  if (!isReleaseArchitecture(value)) {
    throw new FleetkitError(
      'RELEASE_INPUT_INVALID',
      `architecture ${JSON.stringify(value)} is not one of ${RELEASE_ARCHITECTURES.join(', ')}`,
      {
        data: { expected: [...RELEASE_ARCHITECTURES], actual: value },
      },
    )
  }
  return value
}

/** The release architecture of a Node.js `process.arch`, or undefined when fleetkit ships none for it. */
export function releaseArchitectureOf(nodeArch: string): ReleaseArchitecture | undefined {
  if (nodeArch === 'x64') return 'amd64'
  if (nodeArch === 'arm64') return 'arm64'
  return undefined
}

export function archiveName(version: string, arch: ReleaseArchitecture): string {
  return `fleetkit-agent-${version}-linux-${arch}.tar.zst`
}

/** The files of release `version` under <release.url>/<version>/: SHA256SUMS, its signature and an archive per architecture. */
export function isReleaseFileName(version: string, name: string): boolean {
  return (
    name === SUMS_FILE ||
    name === SIGNATURE_FILE ||
    RELEASE_ARCHITECTURES.some((arch) => archiveName(version, arch) === name)
  )
}
