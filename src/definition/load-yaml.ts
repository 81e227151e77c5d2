// YAML text to data: block-yaml.ts's fast path, else js-yaml, loaded the first time a text needs it.
// Block-style definitions and the host policy take the fast path, so a cold `fleetkit validate` of one
// need not load js-yaml at all.
import { createRequire } from 'node:module'

import type * as JsYaml from 'js-yaml'

import { readBlockYaml } from './block-yaml.js'

const require = createRequire(import.meta.url)

let jsYaml: typeof JsYaml | undefined

/** The data TEXT holds; js-yaml's errors (and OPTIONS' limits) for any text the fast path gives up on. */
export function loadYaml(text: string, options?: JsYaml.LoadOptions): unknown {
  const block = readBlockYaml(text)
  if (block !== undefined) return block.value
  jsYaml ??= require('js-yaml') as typeof JsYaml
  return jsYaml.load(text, options)
}
