/**
 * The query of the reminders' read (`Store.listActiveAuthorizations`, docs/behaviour.md
 * B-remind-1…): the `active` authorizations that may soon end, found through an index the store
 * keeps, so that a reminder pass reads the few authorizations near their end and never every user.
 *
 * @module
 */

/**
 * Which `active` authorizations `Store.listActiveAuthorizations` reads: time ones by the end of
 * their window, or points ones by the points they have left. A keyset page, at most `limit`.
 */
export type ActiveAuthorizationQuery =
  | {
      /** Active time authorizations with `endFrom <= endAt < endBefore`, by `endAt`, then id. */
      type: 'time'
      /** Only those ending at or after this time (epoch ms). */
      endFrom: number
      /** Only those ending before this time (epoch ms). */
      endBefore: number
      /** Only those after this one in that order: the last of the previous page. */
      after?: {
        /** Its `endAt`. */ endAt: number
        /** Its id. */ id: number
      }
      /** At most this many (1–1000). */
      limit: number
    }
  | {
      /** Active points authorizations with `0 < remainingPoints < pointsBelow`, by id. */
      type: 'points'
      /** Only those with fewer points left than this. */
      pointsBelow: number
      /** Only those with a greater id: the last of the previous page. */
      afterId?: number
      /** At most this many (1–1000). */
      limit: number
    }
