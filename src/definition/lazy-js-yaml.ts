// js-yaml, loaded the first time a text needs it: block-style definitions and the host policy take
// block-yaml.ts's fast path, so a cold `fleetkit validate` of one need not load js-yaml at all.
import { createRequire } from 'node:module'

import type * as JsYaml from 'js-yaml'

const require = createRequire(import.meta.url)

let loaded: typeof JsYaml | undefined

/** js-yaml's `load`. */
export function jsYamlLoad(text: string, options?: JsYaml.LoadOptions): unknown {
  loaded ??= require('js-yaml') as typeof JsYaml
  return loaded.load(text, options)
}
