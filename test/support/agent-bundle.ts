// The agent bundle (dist/fleetkit-agent.cjs) built at most once per test run: every suite that
// runs the agent asks here instead of running esbuild itself. scripts/test builds it before mocha,
// and the main suite's global setup (test/support/mocha-global.ts) before its parallel workers start.
// A build writes a file of its own and renames it into place, so a worker (or another test process)
// that builds at the same time never copies a half-written bundle.
import { chmod, copyFile, readdir, rename, stat } from 'node:fs/promises'
import { join } from 'node:path'

import { packagePath } from '../../src/package-root.js'
import { runProcessOk } from './process.js'

export const AGENT_BUNDLE = packagePath('dist', 'fleetkit-agent.cjs')

/** What the bundle is made from: the sources it bundles, the build script and the version it embeds. */
const INPUTS = [packagePath('src'), packagePath('scripts', 'build-agent.mjs'), packagePath('package.json')]

let ready: Promise<string> | undefined

/** The path of a current dist/fleetkit-agent.cjs, built by this process only when it is missing or stale. */
export function agentBundle(): Promise<string> {
  ready ??= buildWhenStale().catch((error: unknown) => {
    ready = undefined
    throw error
  })
  return ready
}

/** Copies the current bundle to `path` (0755), e.g. an extensionless file away from the repository. */
export async function copyAgentBundle(path: string): Promise<string> {
  await copyFile(await agentBundle(), path)
  await chmod(path, 0o755)
  return path
}

async function buildWhenStale(): Promise<string> {
  const built = await stat(AGENT_BUNDLE).then(
    (s) => s.mtimeMs,
    () => 0,
  )
  if (built === 0 || built < (await newestMtime(INPUTS))) {
    const partial = `${AGENT_BUNDLE}.partial-${process.pid}`
    await runProcessOk(process.execPath, [packagePath('scripts', 'build-agent.mjs')], {
      cwd: packagePath(),
      env: { ...process.env, FLEETKIT_AGENT_OUTFILE: partial },
    })
    await rename(partial, AGENT_BUNDLE)
  }
  return AGENT_BUNDLE
}

/** The newest modification time among `paths` and the files under those that are directories. */
export async function newestMtime(paths: string[]): Promise<number> {
  let newest = 0
  for (const path of paths) {
    const info = await stat(path)
    if (!info.isDirectory()) {
      newest = Math.max(newest, info.mtimeMs)
      continue
    }
    for (const entry of await readdir(path, { withFileTypes: true, recursive: true })) {
      if (entry.isFile()) newest = Math.max(newest, (await stat(join(entry.parentPath, entry.name))).mtimeMs)
    }
  }
  return newest
}
