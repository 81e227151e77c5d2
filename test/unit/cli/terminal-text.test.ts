import assert from 'node:assert/strict'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { errorEnvelope, humanErrorLines } from '../../../src/cli/error-output.js'
import { formatAllocation, formatReleased } from '../../../src/lifecycle/node/allocations.js'
import { hasControlCharacters, shownOnTerminal } from '../../../src/protocol/terminal-text.js'
import { formatProviderCheck } from '../../../src/provider/provider-check.js'

// ESC sequences that retitle the window, clear the screen and colour, a newline that starts a fake line, and
// the marks that reverse or hide what follows (a right-to-left override, an isolate, a zero-width space).
const HOSTILE = '\u001b]0;pwned\u0007\u001b[2J\u001b[31mX\nFleet is valid\u202e\u2066\u200b'
const ESCAPED = '\\u001b]0;pwned\\u0007\\u001b[2J\\u001b[31mX\\u000aFleet is valid\\u202e\\u2066\\u200b'
// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/

describe('text from outside, on a terminal: shown escaped, never obeyed', () => {
  it('escapes C0 and C1 controls and the bidi and zero-width marks, and leaves other text as it is', () => {
    assert.equal(shownOnTerminal(HOSTILE), ESCAPED)
    assert.equal(shownOnTerminal('build-1 ünïcode 🙂 "quoted"'), 'build-1 ünïcode 🙂 "quoted"')
    assert.equal(hasControlCharacters('ab\u202ecd'), true)
    assert.equal(hasControlCharacters('platform team'), false)
  })

  // The codes the probe saw echo raw text: a key of the definition, an unknown command, a missing path.
  it('an error printed for a person escapes its message, detail lines and actions; --json keeps the text', () => {
    const e = new FleetkitError('DEFINITION_INVALID', `fleet${HOSTILE}.yaml has 1 error`, {
      actions: [`fleetkit validate --definition fleet${HOSTILE}.yaml`],
      detailLines: [`DEFINITION_FIELD_UNKNOWN /${HOSTILE} (3:1): unknown field "${HOSTILE}"`],
      data: { path: `fleet${HOSTILE}.yaml` },
    })
    const lines = humanErrorLines(e, true)
    for (const line of lines) assert.doesNotMatch(line, RAW, line)
    assert.equal(lines[0], `DEFINITION_FIELD_UNKNOWN /${ESCAPED} (3:1): unknown field "${ESCAPED}"`)
    assert.equal(lines[1], `Error (DEFINITION_INVALID): fleet${ESCAPED}.yaml has 1 error`)
    assert.equal(lines[3], `  fleetkit validate --definition fleet${ESCAPED}.yaml`)
    // --debug's stack keeps its own lines; the message inside its first line is escaped.
    assert.ok(lines.some((line) => /^\s+at /.test(line)))
    assert.equal(errorEnvelope(e).message, e.message)
  })

  it('an allocation owner stored before it was refused, and a provider name, print escaped', () => {
    const allocation = {
      id: '6f1c0c1e-0000-4000-8000-000000000001',
      nodeId: 'build-1',
      owner: 'ab\u202ecd\u2066x',
      cpu: 1,
      memoryMib: 1024,
      diskGib: 1,
      status: 'active' as const,
      createdAt: '2026-12-07T10:00:00.000Z',
      releasedAt: null,
      releaseReason: null,
      strandedAt: null,
    }
    assert.match(formatAllocation(allocation), / {2}ab\\u202ecd\\u2066x {2}cpu 1 /)
    assert.match(formatReleased(allocation), /\(owner ab\\u202ecd\\u2066x\)$/)
    const lines = formatProviderCheck({
      apiUrl: 'http://127.0.0.1:1/v1',
      tokenEnv: 'HETZNER_API_TOKEN',
      locations: ['ash', `fsn1${HOSTILE}`],
      serverTypes: [{ name: `cx22${HOSTILE}`, architecture: 'x86', cores: 2, memoryGb: 4, diskGb: 40 }],
      budget: { limit: 3600, remaining: 3598 },
    })
    for (const line of lines) assert.doesNotMatch(line, RAW, line)
    assert.equal(lines[1], `locations: ash, fsn1${ESCAPED}`)
    assert.equal(lines[2], `server types: cx22${ESCAPED} (x86)`)
  })
})
