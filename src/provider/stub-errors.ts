// The local Hetzner Cloud stub's answers and error bodies, shaped as the public API's:
// {"error": {"code", "message", "details"}}; invalid_input names its field. The codes are the client's.
import type { HetznerErrorCode } from './hetzner-error-codes.js'

export interface StubResponse {
  status: number
  body: unknown
}

export function apiError(status: number, code: HetznerErrorCode, message: string, details: unknown = {}): StubResponse {
  return { status, body: { error: { code, message, details } } }
}

export function invalidInput(field: string, message: string): StubResponse {
  return apiError(422, 'invalid_input', `invalid input in field '${field}'`, {
    fields: [{ name: field, messages: [message] }],
  })
}

export function uniquenessError(what: string, field = 'name'): StubResponse {
  return apiError(409, 'uniqueness_error', `${what} ${field} is already used`, { fields: [{ name: field }] })
}
