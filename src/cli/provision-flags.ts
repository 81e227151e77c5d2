// Flags shared by `node provision` and `node replace`: the definition, the state, the API URL and the wait.
import { Flags } from '@oclif/core'

import { definitionFlag, stateDirFlag } from './flags.js'

export const provisionCommonFlags = {
  definition: definitionFlag(),
  'state-dir': stateDirFlag(),
  'api-url': Flags.string({
    summary: "The Hetzner Cloud API root (default: the definition's providers.hetzner.endpoint, else the public API).",
    env: 'HETZNER_API_URL',
    helpValue: 'URL',
  }),
  wait: Flags.string({
    summary: 'How long to wait for the agent to enroll (90s, 10m, 1h).',
    default: '10m',
    helpValue: 'DURATION',
  }),
}
