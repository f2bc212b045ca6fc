/**
 * One-time subscription confirmations (一次性订阅消息): what the confirm page records and the
 * subscribe send spends. "Each confirmation allows one message; several confirmations of one user
 * under one scene do not add up" (reference phone-pay-reminders-admin.md §2.1): so a confirmation is
 * a flag per (openid, template id, scene), set by Confirm and cleared by the send that uses it.
 *
 * @module
 */
import type { EmulatorSubscription } from './types'

/** The confirmations not yet spent. */
export class SubscribeConsents {
  readonly #granted = new Map<string, EmulatorSubscription>()

  /** Records a Confirm on the confirm page; a second one under the same scene changes nothing but the time. */
  grant(openid: string, templateId: string, scene: string, at: number): void {
    this.#granted.set(key(openid, templateId, scene), { openid, templateId, scene, at })
  }

  /** Spends the confirmation the send needs; false when there is none (the send answers 43101). */
  spend(openid: string, templateId: string, scene: string): boolean {
    return this.#granted.delete(key(openid, templateId, scene))
  }

  /** The unspent confirmations, oldest first. */
  all(): EmulatorSubscription[] {
    return [...this.#granted.values()].sort((a, b) => a.at - b.at).map((entry) => ({ ...entry }))
  }
}

function key(openid: string, templateId: string, scene: string): string {
  // JSON keeps the parts apart whatever they contain.
  return JSON.stringify([openid, templateId, scene])
}
