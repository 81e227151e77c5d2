// The injected source of time: rules compare against clock.now(), so tests set the
// time instead of sleeping.
export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

/** A clock that stays where it is put: for tests and replays. */
export function fixedClock(start: Date): Clock & { set(at: Date): void; advance(ms: number): void } {
  let current = new Date(start)
  return {
    now: () => new Date(current),
    set: (at) => {
      current = new Date(at)
    },
    advance: (ms) => {
      current = new Date(current.getTime() + ms)
    },
  }
}
