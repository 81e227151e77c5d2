// What PostgreSQL's own output (initdb's stderr, the server's log) says went wrong: the line that
// names the reason, and whether it is a full disk. Only PostgreSQL's fixed wording is matched; the
// server and initdb run without a locale (LC_ALL=C, or none set), so it is English.

/**
 * A full disk in PostgreSQL's words: the system's ENOSPC text, or PostgreSQL's own short write (errcode
 * 53100, "could not extend file ...: wrote only N of M bytes", hint "Check free disk space."), which a
 * filesystem that fills mid-block gives without an errno. The file it names is relative to the data directory.
 */
export function saysDiskFull(text: string): boolean {
  return (
    /No space left on device/i.test(text) ||
    /\b(?:FATAL|PANIC|ERROR):\s*could not extend file "[^"\n]*": wrote only \d+ of \d+ bytes at block \d+/.test(text) ||
    /\bHINT:\s*Check free disk space\./.test(text)
  )
}

/**
 * The first FATAL or PANIC line of a server's log, from its severity on ("FATAL: could not write lock
 * file ..."), its timestamp and PID prefix dropped; undefined when there is none. The first, because
 * what follows it ("shutting down due to startup process failure") is the consequence.
 */
export function firstFatalLine(log: string): string | undefined {
  for (const line of log.split('\n')) {
    const said = /\b(FATAL|PANIC):\s*(.*)$/.exec(line.trim())
    if (said) return `${said[1]}: ${said[2]}`
  }
  return undefined
}
