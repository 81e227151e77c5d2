// Where the two sides meet a contract violation: the gateway refuses a request with
// REQUEST_INVALID (HTTP 400), the agent refuses a response with GATEWAY_RESPONSE_INVALID.
import { FleetkitError } from '../checks/fleetkit-error.js'
import { WireFormatError } from './wire-format.js'

/** Read a request body with its contract's reader; a violation is REQUEST_INVALID naming the field. */
export function readRequest<T>(read: (value: unknown) => T, body: unknown): T {
  try {
    return read(body)
  } catch (error) {
    if (!(error instanceof WireFormatError)) throw error
    throw new FleetkitError('REQUEST_INVALID', `the request does not match the contract: ${error.message}`, {
      data: { field: error.path },
    })
  }
}

/** Read a gateway response with its contract's reader; a violation is GATEWAY_RESPONSE_INVALID naming the route and field. */
export function readResponse<T>(read: (value: unknown) => T, body: unknown, route: string): T {
  try {
    return read(body)
  } catch (error) {
    if (!(error instanceof WireFormatError)) throw error
    throw new FleetkitError(
      'GATEWAY_RESPONSE_INVALID',
      `the gateway's answer to ${route} does not match the contract: ${error.message}`,
      {
        actions: [
          "fleetkit-agent --version (on the host) and compare it with the gateway's fleetkit version",
          'fleetkit-agent doctor',
        ],
        data: { route, field: error.path },
      },
    )
  }
}
