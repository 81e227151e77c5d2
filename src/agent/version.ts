// The agent's version: fleetkit's package version. The bundle gets it inlined by esbuild
// (define), so the shipped file reads nothing; from source (tsx) it reads package.json.
import { readFileSync } from 'node:fs'

declare const __FLEETKIT_AGENT_VERSION__: string | undefined

function versionFromPackageJson(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
    .version
}

export const AGENT_VERSION: string =
  typeof __FLEETKIT_AGENT_VERSION__ === 'string' ? __FLEETKIT_AGENT_VERSION__ : versionFromPackageJson()
