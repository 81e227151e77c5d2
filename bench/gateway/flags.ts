// Whole-number flags of the gateway benches (`--name N`), bounded so a typo cannot start an hour-long run.
import { loadavg } from 'node:os'

export function flag(name: string, fallback: number, min = 1, max = 10_000): number {
  const i = process.argv.indexOf(`--${name}`)
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`--${name} must be a whole number from ${min} to ${max}`)
  return value
}

/** The 1, 5 and 15 minute load averages, as the benches print them beside their figures. */
export const loadText = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ')
