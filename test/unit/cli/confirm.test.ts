// The y/N question of irreversible commands, with fake streams standing in for a terminal:
// y goes ahead, n and end of input refuse, no terminal or --json refuse without asking unless --yes.
import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'

import { confirmer, type ConfirmationRequest, type PromptStreams } from '../../../src/cli/confirm.js'

const REQUEST: ConfirmationRequest = {
  what: 'retire build-01 (draining): every certificate of it is revoked',
  command: 'fleetkit node decommission build-01 --yes',
  data: { nodeId: 'build-01' },
}

/** A fake terminal: stdin and stderr both TTYs (unless told), what was written kept. */
function terminal(tty = { input: true, output: true }): PromptStreams & { written: () => string; input: PassThrough } {
  const input = Object.assign(new PassThrough(), { isTTY: tty.input })
  const output = Object.assign(new PassThrough(), { isTTY: tty.output })
  let written = ''
  output.on('data', (chunk: Buffer) => (written += chunk.toString()))
  return { input, output, written: () => written }
}

describe('confirm: the question before an irreversible step', () => {
  it('answered y (or yes): goes ahead after asking a question that names the node and what is lost', async () => {
    for (const answer of ['y\n', 'YES\r\n', ' y \n']) {
      const streams = terminal()
      let before = 0
      const asked = confirmer({ yes: false, json: false, streams, beforeAsk: () => (before += 1) })(REQUEST)
      streams.input.write(answer)
      await asked
      assert.equal(before, 1, 'the progress line is ended before the question')
      assert.match(
        streams.written(),
        /^Retire build-01 \(draining\): every certificate of it is revoked\.\nContinue\? \[y\/N\] $/,
      )
    }
  })

  it('answered n, or just Enter: CONFIRMATION_DECLINED, nothing done', async () => {
    for (const answer of ['n\n', '\n', 'maybe\n']) {
      const streams = terminal()
      const asked = confirmer({ yes: false, json: false, streams })(REQUEST)
      streams.input.write(answer)
      await assert.rejects(asked, (e: { code: string; message: string; data: Record<string, unknown> }) => {
        assert.equal(e.code, 'CONFIRMATION_DECLINED')
        assert.match(e.message, /^not confirmed \(answered no\): did not retire build-01 .*; nothing changed$/)
        assert.equal(e.data.reason, 'declined')
        return true
      })
    }
  })

  it('end of input before an answer (Ctrl-D): CONFIRMATION_DECLINED, no answer', async () => {
    const streams = terminal()
    const asked = confirmer({ yes: false, json: false, streams })(REQUEST)
    streams.input.end()
    await assert.rejects(asked, { code: 'CONFIRMATION_DECLINED', message: /^not confirmed \(no answer\)/ })
  })

  it('no terminal (stdin or stderr not a TTY), or --json: CONFIRMATION_REQUIRED naming the command with --yes, nothing asked', async () => {
    for (const [streams, json, reason] of [
      [terminal({ input: false, output: true }), false, 'no_terminal'],
      [terminal({ input: true, output: false }), false, 'no_terminal'],
      [terminal(), true, 'json'],
    ] as const) {
      await assert.rejects(
        confirmer({ yes: false, json, streams })(REQUEST),
        (e: { code: string; message: string; actions: string[]; data: Record<string, unknown> }) => {
          assert.equal(e.code, 'CONFIRMATION_REQUIRED')
          assert.match(e.message, /^retire build-01 .*, so it needs --yes; nothing changed$/)
          assert.equal(e.actions[0], 'fleetkit node decommission build-01 --yes')
          assert.equal(e.data.reason, reason)
          assert.equal(e.data.nodeId, 'build-01')
          return true
        },
      )
      assert.equal(streams.written(), '', 'nothing is asked')
    }
  })

  it('a library may name a more precise code for the refusal without a terminal', async () => {
    const streams = terminal({ input: false, output: false })
    await assert.rejects(confirmer({ yes: false, json: false, streams })({ ...REQUEST, code: 'SEED_KIND_PENDING' }), {
      code: 'SEED_KIND_PENDING',
    })
  })

  it('--yes: goes ahead without asking, terminal or not', async () => {
    for (const streams of [terminal(), terminal({ input: false, output: false })]) {
      await confirmer({ yes: true, json: false, streams })(REQUEST)
      await confirmer({ yes: true, json: true, streams })(REQUEST)
      assert.equal(streams.written(), '')
    }
  })

  it('Ctrl-C while asking rejects with the interruption', async () => {
    const streams = terminal()
    const abort = new AbortController()
    const asked = confirmer({ yes: false, json: false, streams, signal: abort.signal })(REQUEST)
    abort.abort(new Error('interrupted'))
    await assert.rejects(asked, /interrupted/)
  })
})
