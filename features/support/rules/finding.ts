// What a registry rule reports: one problem, where it was found, in one line.
export interface RuleFinding {
  rule: string
  message: string
  file?: string
  line?: number
}

export function formatFinding(f: RuleFinding): string {
  const where = f.file ? ` (${f.file}${f.line ? `:${f.line}` : ''})` : ''
  return `${f.rule}: ${f.message}${where}`
}
