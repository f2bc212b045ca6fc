/**
 * Waiting on one scene until a status ends the wait, down the ladder of transports: the event stream,
 * the long poll, the plain poll (with `'auto'`), or the one transport forced.
 *
 * @module
 */
import { fallbackTransport } from './transport'
import type { WaitInput } from './wait-context'
import { waitByEvents } from './wait-events'
import { waitByLongPoll, waitByPoll } from './wait-polls'
import type { StatusBody } from './wire'

/**
 * The status that ends the wait on `input.sceneStr` (an unknown scene reads as `expired`). Rejects
 * with the last transport's error when it fails and there is nothing to fall back to.
 */
export async function waitScene(input: WaitInput): Promise<StatusBody> {
  for (;;) {
    const transport = input.transports.current
    const outcome = transport === 'events' ? await waitByEvents(input) : transport === 'long-poll' ? await waitByLongPoll(input) : await waitByPoll(input)
    if (outcome.kind === 'final') return outcome.status
    const next = fallbackTransport(input.transports.option, transport)
    if (next === undefined) throw outcome.error
    input.transports.current = next
  }
}
