// The one registry of failure codes. Each family declares its codes in
// src/checks/codes/<family>.ts; docs/runbooks.md has one line per code here.
import { CLI_CODES } from './codes/cli.js'
import { STORE_CODES } from './codes/store.js'
import { DEFINITION_CODES } from './codes/definition.js'
import { RELEASE_CODES } from './codes/release.js'
import { PKI_CODES } from './codes/pki.js'
import { GATEWAY_CODES } from './codes/gateway.js'
import { RENDER_CODES } from './codes/render.js'
import { AGENT_CODES } from './codes/agent.js'
import { LIFECYCLE_CODES } from './codes/lifecycle.js'
import { HOST_CODES } from './codes/host.js'
import { FIREWALL_CODES } from './codes/firewall.js'
import { SYNC_CODES } from './codes/sync.js'
import { PROVIDER_CODES } from './codes/provider.js'
import { PROVISION_CODES } from './codes/provision.js'
import { DEMO_CODES } from './codes/demo.js'
import { BACKUP_CODES } from './codes/backup.js'
import { RECONCILE_CODES } from './codes/reconcile.js'
import type { FailureCodeSpec } from './failure-code-spec.js'

export type { FailureCodeSpec } from './failure-code-spec.js'

export const FAILURE_CODES = {
  ...CLI_CODES,
  ...STORE_CODES,
  ...DEFINITION_CODES,
  ...RELEASE_CODES,
  ...PKI_CODES,
  ...GATEWAY_CODES,
  ...RENDER_CODES,
  ...AGENT_CODES,
  ...LIFECYCLE_CODES,
  ...HOST_CODES,
  ...FIREWALL_CODES,
  ...SYNC_CODES,
  ...PROVIDER_CODES,
  ...PROVISION_CODES,
  ...DEMO_CODES,
  ...BACKUP_CODES,
  ...RECONCILE_CODES,
} as const satisfies Record<string, FailureCodeSpec>

export type FailureCode = keyof typeof FAILURE_CODES

export function isFailureCode(value: string): value is FailureCode {
  return Object.hasOwn(FAILURE_CODES, value)
}

export function failureCodeSpec(code: FailureCode): FailureCodeSpec {
  return FAILURE_CODES[code]
}
