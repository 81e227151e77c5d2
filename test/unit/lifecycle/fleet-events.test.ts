import assert from 'node:assert/strict'

import { formatEvent } from '../../../src/lifecycle/view/fleet-events.js'

describe('fleetkit events: a line per event', () => {
  const event = { id: 1, at: '2026-12-07T10:00:00.000Z', kind: 'node_held', nodeId: 'web-1', data: {} }

  it('prints the time, kind, node and data', () => {
    assert.equal(
      formatEvent({ ...event, data: { reason: 'disk swap', by: { actor: 'alice' } } }),
      '2026-12-07T10:00:00.000Z  node_held            web-1            reason=disk swap by={"actor":"alice"}',
    )
  })

  it('shows control characters escaped, so a terminal never obeys text from a host or a caller', () => {
    const line = formatEvent({
      ...event,
      nodeId: 'web\u001b[2J',
      data: { reason: 'a\u001b]0;owned\u0007b\nc\u009b31m', nested: { m: '\u001b[1m' } },
    })
    // eslint-disable-next-line no-control-regex
    assert.doesNotMatch(line, /[\u0000-\u001f\u007f-\u009f]/)
    assert.match(line, /web\\u001b\[2J/)
    assert.match(line, /reason=a\\u001b\]0;owned\\u0007b\\u000ac\\u009b31m/)
    assert.match(line, /nested=\{"m":"\\u001b\[1m"\}/)
  })

  it('shows the marks that reorder or hide text escaped too (a right-to-left override, a zero-width space)', () => {
    const line = formatEvent({ ...event, data: { reason: 'ok\u202egnp.exe\u200b\u2066x' } })
    assert.doesNotMatch(line, /[\u200b-\u200f\u202a-\u202e\u2066-\u2069]/)
    assert.match(line, /reason=ok\\u202egnp\.exe\\u200b\\u2066x/)
  })
})
