// `fleetkit runbook CODE`: print a failure code's runbook entry from docs/runbooks.md
// (src/checks/runbooks.ts).
import { Args } from '@oclif/core'

import { suggestCodes } from '../cli/did-you-mean.js'
import { FleetkitCommand } from '../cli/fleetkit-command.js'
import { FAILURE_CODES, isFailureCode } from '../checks/failure-codes.js'
import { FleetkitError } from '../checks/fleetkit-error.js'
import { findRunbookEntry, loadRunbooks } from '../checks/runbooks.js'

export interface RunbookResult {
  /** @pattern ^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$ */
  code: string
  /** @minLength 1 */
  summary: string
  person: boolean
  /** @minLength 1 */
  section: string
  /** @minLength 1 */
  line: string
  /** @minLength 1 */
  meaning: string
  /** @minLength 1 */
  confirm: string
  /** @minLength 1 */
  fix: string
  /** @minLength 1 */
  escalate: string
}

export default class Runbook extends FleetkitCommand<RunbookResult> {
  static override summary = 'Print the runbook entry for a failure code: meaning, how to confirm, fix and escalate.'
  static override examples = ['<%= config.bin %> <%= command.id %> DEFINITION_INVALID']
  static override args = {
    code: Args.string({ description: 'failure code, for example DEFINITION_INVALID', required: true }),
  }

  async run(): Promise<RunbookResult> {
    const { args } = await this.parse(Runbook)
    const code = args.code.trim().toUpperCase()
    const entry = findRunbookEntry(await loadRunbooks(), code)
    if (!isFailureCode(code) || !entry) {
      const suggestions = suggestCodes(code, Object.keys(FAILURE_CODES))
      const didYouMean =
        suggestions.length === 0 ? '' : `; did you mean ${suggestions.map((s) => `"${s}"`).join(' or ')}?`
      throw new FleetkitError(
        'RUNBOOK_CODE_UNKNOWN',
        `no failure code ${JSON.stringify(args.code)} is registered${didYouMean}`,
        {
          actions: [...suggestions.map((s) => `fleetkit runbook ${s}`), 'fleetkit checks'],
          data: { code: args.code, suggestions },
        },
      )
    }
    const spec = FAILURE_CODES[code]
    const { section } = entry
    this.log(`${code}: ${entry.line}`)
    this.log(`Needs a person: ${spec.person ? 'yes' : 'no'}    Runbook: ${section.title}`)
    this.log(
      `\nMeaning:  ${section.meaning}\nConfirm:  ${section.confirm}\nFix:      ${section.fix}\nEscalate: ${section.escalate}`,
    )
    return {
      code,
      summary: spec.summary,
      person: spec.person,
      section: section.title,
      line: entry.line,
      meaning: section.meaning,
      confirm: section.confirm,
      fix: section.fix,
      escalate: section.escalate,
    }
  }
}
