// Text from outside (a definition file, argv, a provider's answer, a stored value an API caller chose) as a
// terminal must show it: every human-output path that echoes such text passes it through shownOnTerminal.
import { CONTROL_CHARACTERS } from './wire-format.js'

// C0 and C1 controls (ESC and CSI among them) and the marks that reorder or hide text: wire-format.ts's set.
const CONTROL = new RegExp(`[${CONTROL_CHARACTERS}]`)
const CONTROLS = new RegExp(`[${CONTROL_CHARACTERS}]`, 'g')

/**
 * TEXT with each control character or bidi/zero-width mark written as `\u001b`: a terminal shows it, never obeys
 * it (moves the cursor, retitles the window, clears what was printed, starts a fake line) nor lets it reorder or
 * hide what is printed beside it (a right-to-left override, a zero-width space). Shown rather than removed, so
 * an operator sees what the text held. `--json` needs none of this: JSON escapes controls, and a program reads it.
 */
export function shownOnTerminal(text: string): string {
  return CONTROL.test(text)
    ? text.replace(CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    : text
}

/** Whether TEXT holds a character shownOnTerminal would escape: a value to be stored and printed is refused for it. */
export function hasControlCharacters(text: string): boolean {
  return CONTROL.test(text)
}
