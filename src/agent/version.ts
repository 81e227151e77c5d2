// The agent's version: fleetkit's package version. The bundle gets it inlined by esbuild
// (define), so the shipped file reads nothing; from source (tsx) it reads package.json.
import { readFileSync } from 'node:fs'

import { packagePath } from '../package-root.js'

declare const __FLEETKIT_AGENT_VERSION__: string | undefined

export const AGENT_VERSION: string =
  typeof __FLEETKIT_AGENT_VERSION__ === 'string' ? __FLEETKIT_AGENT_VERSION__ : (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version
