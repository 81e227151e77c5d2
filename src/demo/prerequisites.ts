// What `fleetkit demo` needs before it starts: the built agent bundle, the tools the seed's
// release verifier runs on a host (bash, curl, openssl, zstd, tar, sha256sum, base64), and a
// temporary directory to make its workspace in.
import { access, constants, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
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

/** A directory this user may make entries in. */
async function writableDirectory(dir: string): Promise<boolean> {
  try {
    if (!(await stat(dir)).isDirectory()) return false
    await access(dir, constants.W_OK | constants.X_OK)
    return true
  } catch {
    return false
  }
}

export async function assertPrerequisites(
  env: NodeJS.ProcessEnv = process.env,
  temp: string = tmpdir(),
): Promise<void> {
  const missing: string[] = []
  // The workspace goes there (TMPDIR, else /tmp): a TMPDIR that names nothing would fail the first step.
  const tempMissing = !(await writableDirectory(temp))
  if (tempMissing) missing.push(`a writable temporary directory (${temp} is not one)`)
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
      ...(missing.some((m) => TOOLS.includes(m)) ? ['sudo apt-get install curl openssl zstd tar coreutils'] : []),
      ...(tempMissing ? ['export TMPDIR=/tmp   (or another directory this user can write), then run it again'] : []),
    ],
    data: { missing },
  })
}
