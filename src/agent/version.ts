// The agent's version: fleetkit's package version, inlined into the bundle by esbuild.
import packageJson from '../../package.json' with { type: 'json' }

export const AGENT_VERSION: string = packageJson.version
