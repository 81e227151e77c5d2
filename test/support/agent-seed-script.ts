// The enrollment script inside an agent seed (its cloud-config's write_files entry that runcmd
// runs), written beside the seed: what a sandbox test runs with bash where cloud-init would.
import { readFile, writeFile } from 'node:fs/promises'

import { parse } from 'yaml'

import { AGENT_SEED_SCRIPT_PATH } from '../../src/render/agent-seed.js'

export function agentSeedScriptOf(userData: string): string {
  const doc = parse(userData) as { write_files?: { path: string; content: string }[]; runcmd?: unknown[] }
  const script = doc.write_files?.find((f) => f.path === AGENT_SEED_SCRIPT_PATH)
  if (!script) throw new Error(`the seed has no ${AGENT_SEED_SCRIPT_PATH} to run`)
  return script.content
}

/** Writes SEED_FILE.sh (0700) from the agent seed at SEED_FILE and returns its path. */
export async function writeAgentSeedScript(seedFile: string): Promise<string> {
  const path = `${seedFile}.sh`
  await writeFile(path, agentSeedScriptOf(await readFile(seedFile, 'utf8')), { mode: 0o700 })
  return path
}
