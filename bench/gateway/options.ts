// The gateway bench's command line: how many agents, for how long, and whether to record the
// figures in docs/performance.md (only with --write-docs).

export interface Options {
  agents: number[]
  seconds: number
  intervalMs: number
  enrollments: number
  budgetSeconds: number
  /** Append the figures to docs/performance.md; without it the bench only prints them. */
  writeDocs: boolean
}

const USAGE =
  'npx tsx bench/gateway.ts [--agents 1000,10000] [--seconds 20] [--interval-ms 1000] [--enrollments 1000] [--budget-seconds 600] [--write-docs]'

export function parseOptions(argv: string[]): Options {
  const options: Options = {
    agents: [1000, 10000],
    seconds: 20,
    intervalMs: 1000,
    enrollments: 1000,
    budgetSeconds: 600,
    writeDocs: false,
  }
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]
    const value = () => {
      const v = argv[++i]
      if (v === undefined) throw new Error(`${flag} needs a value`)
      return v
    }
    if (flag === '--agents')
      options.agents = value()
        .split(',')
        .map((n) => Math.min(Math.max(Number(n), 1), 10_000))
    else if (flag === '--seconds') options.seconds = Math.min(Math.max(Number(value()), 5), 120)
    else if (flag === '--interval-ms') options.intervalMs = Math.max(Number(value()), 0)
    else if (flag === '--enrollments') options.enrollments = Math.min(Math.max(Number(value()), 0), 10_000)
    else if (flag === '--budget-seconds') options.budgetSeconds = Math.min(Math.max(Number(value()), 60), 1800)
    else if (flag === '--write-docs') options.writeDocs = true
    else throw new Error(`unknown flag ${flag}; usage: ${USAGE}`)
  }
  return options
}
