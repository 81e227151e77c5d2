// What `fleetkit demo` needs before it starts: the built agent bundle, and the tools the seed's
// release verifier runs on a host (bash, curl, openssl, zstd, tar, sha256sum, base64).
import { access, constants } from 'node:fs/promises'
import { delimiter, join } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { AGENT_BUNDLE_PATH } from './release.js'

const TOOLS = ['bash', 'curl', 'openssl', 'zstd', 'tar', 'sha256sum', 'base64']

async function onPath(tool: string, path: string): Promise<boolean> {
  for (const dir of path.split(delimiter).filter(Boolean)) {
    if (
      await access(join(dir, tool), constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return true
  }
  return false
}

export async function assertPrerequisites(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const missing: string[] = []
  if (
    !(await access(AGENT_BUNDLE_PATH).then(
      () => true,
      () => false,
    ))
  )
    missing.push(AGENT_BUNDLE_PATH)
  for (const tool of TOOLS) if (!(await onPath(tool, env.PATH ?? ''))) missing.push(tool)
  if (missing.length === 0) return
  const bundle = missing.includes(AGENT_BUNDLE_PATH)
  throw new FleetkitError('DEMO_PREREQUISITE_MISSING', `fleetkit demo needs ${missing.join(', ')}`, {
    actions: [
      ...(bundle ? ['npm run build   (in the fleetkit checkout; it builds dist/fleetkit-agent.cjs)'] : []),
      ...(missing.some((m) => m !== AGENT_BUNDLE_PATH) ? ['sudo apt-get install curl openssl zstd tar coreutils'] : []),
    ],
    data: { missing },
  })
}
