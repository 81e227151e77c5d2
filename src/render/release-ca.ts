// release.caFile: the CA of a private release mirror, read from the operator's disk for the agent
// seed and the inventory (agent_update verifies downloads with it on hosts).
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'

import type { Definition } from '../definition/types.js'
import { invalidValue } from './values.js'

/** The private mirror's CA bundle named by release.caFile, relative to the definition's directory. */
export async function readReleaseCa(definition: Definition, definitionDir: string): Promise<string | undefined> {
  const file = definition.release.caFile
  if (file === undefined) return undefined
  try {
    return await readFile(resolve(definitionDir, file), 'utf8')
  } catch {
    throw invalidValue('release.caFile', "a readable PEM file (relative paths start at the definition's directory)")
  }
}
