// The commands that move one node from one status to another (node park, unpark, undrain, admit,
// drain) or mark it (node hold, release): one shape, NODE and --state-dir, the state opened once, the
// result's message printed, so each command file holds only what is its own: its words, its extra
// flags, its lifecycle function.
import { Args, type Interfaces } from '@oclif/core'

import { stateDirFlag } from './flags.js'
import { FleetkitCommand } from './fleetkit-command.js'
import type { StateContext } from './operator-context.js'

/** What a transition's lifecycle function is handed: the node and the operator context with the state. */
interface TransitionInput extends Pick<StateContext, 'pool' | 'actor' | 'clock' | 'signal'> {
  nodeId: string
}

export interface TransitionSpec<R extends { message: string }, F extends Interfaces.FlagInput> {
  summary: string
  description?: string
  examples: string[]
  /** Its own flags, listed before --state-dir. */
  flags?: F
  /** Ctrl-C and SIGTERM abort `signal` (a --wait) instead of killing the process. */
  interruptible?: boolean
  /**
   * Called in run() before the state opens: imports the lifecycle module (here, so that listing the
   * commands loads none) and reads what the flags name (a fleet.yaml); returns the transition itself.
   */
  load: (flags: Interfaces.InferredFlags<F>, nodeId: string) => Promise<(input: TransitionInput) => Promise<R>>
  /** Lines printed after the result's message. */
  more?: (result: R) => string[]
}

/**
 * The command class of one transition, as a command file's default export (oclif finds it there and
 * lists its summary, examples, NODE and flags in the manifest like any other).
 */
export function transitionCommand<
  R extends { message: string },
  F extends Interfaces.FlagInput = Record<string, never>,
>(spec: TransitionSpec<R, F>) {
  const Transition = class extends FleetkitCommand<R> {
    static override summary = spec.summary
    static override description = spec.description
    static override examples = spec.examples
    static override args = { node: Args.string({ description: 'node id', required: true }) }
    static override flags = { ...spec.flags, 'state-dir': stateDirFlag() }

    async run(): Promise<R> {
      const { args, flags } = await this.parse(Transition)
      const transition = await spec.load(flags as Interfaces.InferredFlags<F>, args.node)
      const result = await this.withState(
        { stateDir: flags['state-dir'] as string | undefined, interruptible: spec.interruptible === true },
        ({ pool, actor, clock, signal }) => transition({ pool, nodeId: args.node, actor, clock, signal }),
      )
      this.log(result.message)
      for (const line of spec.more?.(result) ?? []) this.log(line)
      return result
    }
  }
  return Transition
}
