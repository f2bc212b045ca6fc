/**
 * What the emulator's send APIs (send-api.ts) keep between requests: its users, their subscription
 * consents, the messages received and the daily quota. A module of its own so that the API router
 * (api.ts) and the send APIs both name it without importing each other.
 *
 * @module
 */
import type { DailyQuota, MessageLog } from './message-log'
import type { SubscribeConsents } from './subscriptions'
import type { EmulatorMessage } from './types'
import type { EmulatorUsers } from './users'

/** What the send APIs work with: the account's users, confirmations, messages, quota and templates. */
export interface MessagingState {
  users: EmulatorUsers
  consents: SubscribeConsents
  log: MessageLog
  quota: DailyQuota
  /** The account's template message ids; null: any. */
  templateIds: ReadonlySet<string> | null
  /** The account's one-time subscription template id; null: any. */
  subscribeTemplateId: string | null
  now: () => number
  /** Called after a template message was accepted: the emulator pushes its delivery report. */
  onTemplateSent(message: EmulatorMessage): void
}
