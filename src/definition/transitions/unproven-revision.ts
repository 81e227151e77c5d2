// Transition rule: a new pool image or agent version reaches the fleet only after a canary
// run of exactly that revision is recorded in the state (TRANSITION_UNPROVEN).
import { pointer } from '../json-pointer.js'
import type { DefinitionError } from '../types.js'
import { type TransitionRule, transitionError } from './transition-rule.js'

export const revisionsProvenByCanary: TransitionRule = async ({ previous, current, facts }) => {
  const errors: DefinitionError[] = []
  const canary = current.canary === undefined ? 'the canary' : `canary "${current.canary}"`
  if (
    current.release.version !== previous.release.version &&
    !(await facts.canaryProven('agentVersion', current.release.version))
  ) {
    errors.push(
      transitionError({
        code: 'TRANSITION_UNPROVEN',
        path: pointer('release', 'version'),
        expected: `a recorded canary run of agent version ${current.release.version}`,
        actual: { from: previous.release.version, to: current.release.version, canaryRun: false },
        message: `agent version changes ${previous.release.version} -> ${current.release.version} fleet-wide, but no canary run of ${current.release.version} is recorded; prove it on ${canary} first`,
      }),
    )
  }
  for (const [name, pool] of Object.entries(current.pools)) {
    const before = previous.pools[name]?.image
    if (pool.image === undefined || before === undefined || before === pool.image) continue
    if (await facts.canaryProven('image', pool.image)) continue
    errors.push(
      transitionError({
        code: 'TRANSITION_UNPROVEN',
        path: pointer('pools', name, 'image'),
        expected: `a recorded canary run of image ${pool.image}`,
        actual: { from: before, to: pool.image, canaryRun: false },
        message: `pool "${name}" image changes ${before} -> ${pool.image}, but no canary run of ${pool.image} is recorded; prove it on ${canary} first`,
      }),
    )
  }
  return errors
}
