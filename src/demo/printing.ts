// How the demo shows what happens: numbered steps, indented lines, and after each step the fleet as
// `fleetkit node list` prints it and the events since the last step as `fleetkit events` prints them.
import { fleetEvents, formatEvent } from '../lifecycle/view/fleet-events.js'
import { formatNodeTable } from '../lifecycle/view/fleet-table.js'
import { nodeList, type NodeListResult } from '../lifecycle/view/fleet-view.js'
import type { Queryable } from '../store/database.js'

export interface DemoPrinter {
  /** Starts step N of the demo. */
  step(title: string): void
  /** One line under the current step. */
  line(text: string): void
  /** `fleetkit node list` and the `fleetkit events` since the last call. */
  fleet(pool: Queryable): Promise<NodeListResult>
  /** Every step title so far, in order. */
  readonly steps: string[]
}

export function createPrinter(write: (line: string) => void, total: number): DemoPrinter {
  const steps: string[] = []
  let lastEventId = 0
  return {
    steps,
    step(title) {
      steps.push(title)
      write('')
      write(`[${steps.length}/${total}] ${title}`)
    },
    line(text) {
      write(`    ${text}`)
    },
    async fleet(pool) {
      const list = await nodeList(pool)
      write('    $ fleetkit node list')
      for (const line of formatNodeTable(list)) write(`    ${line}`)
      const events = (await fleetEvents(pool, {})).events.filter((e) => e.id > lastEventId)
      write(`    $ fleetkit events   (${events.length} new)`)
      for (const event of events) write(`    ${formatEvent(event)}`)
      lastEventId = Math.max(lastEventId, ...events.map((e) => e.id))
      return list
    },
  }
}
