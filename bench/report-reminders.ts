/**
 * The reminders section of `docs/benchmarks.md` (issue 28): what `bench/reminders.ts` measures, its
 * table, and what the figures say. `bench/report.ts` puts it in place; `bench/run.ts` prints the
 * table and the notes for the section.
 *
 * @module
 */
import { REMINDER_DUE, REMINDER_USERS, WINDOWS, remindersTable, type ReminderBenchRow } from './reminders'
import { STORE_LABEL } from './stores'

const n = (x: number, digits = 0) => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

/** What the figures of each store say, one line each. */
export function remindersNotes(rows: ReminderBenchRow[]): string[] {
  return rows.map((r) => {
    const pages = r.storeCalls.listActiveAuthorizations ?? 0
    const readShare = r.passReadMs / r.passMs
    const trips =
      r.roundTripsPerDue === undefined
        ? ''
        : ` On the wire: ${n(r.roundTripsPerDue, 3)} round trips per due person, against the floor's ${n(r.baseline.roundTripsPerDue ?? 0, 3)}.`
    const read =
      readShare >= 0.5
        ? `Most of the pass (${n(readShare * 100)}%) is its index read: MemoryStore finds a page by walking every active authorization of the type and sorting those in the window (\`packages/core/src/store/memory-active.ts\`), ${n(r.passReadMs / Math.max(1, pages), 1)} ms a page here, so its read grows with the users held while the other stores' does not; the floor's sorted array finds the same pages in ${n(r.baseline.readMs, 1)} ms.`
        : `The index read is ${n(readShare * 100, 1)}% of the pass (the floor's, ${n(r.baseline.readMs, 1)} ms); the rest is the work per due person.`
    return (
      `- **${STORE_LABEL[r.store]}** (ratio ${n(r.ratio, r.ratio < 0.1 ? 3 : 2)}): a pass read ${n(r.checked)} of ${n(r.users)} authorizations in ${n(pages)} ` +
      `calls of \`listActiveAuthorizations\` (${n(r.passReadMs, 1)} ms of ${n(r.passMs, 1)}) and made ${n(r.storeCallsPerDue, 3)} store calls per due person. ${read}${trips}`
    )
  })
}

/** The section, as `npm run bench` prints it: the table and the notes. */
export function remindersPrinted(rows: ReminderBenchRow[]): string {
  return [remindersTable(rows), '', ...remindersNotes(rows)].join('\n')
}

/** The section of `docs/benchmarks.md`. */
export function remindersSection(rows: ReminderBenchRow[]): string[] {
  return [
    '',
    `## A reminder pass over ${n(REMINDER_USERS)} users (\`bench/reminders.ts\`)`,
    '',
    `Issue 28: one \`auth.sendReminders({ now })\` over ${n(REMINDER_USERS)} users of whom ${n(REMINDER_DUE)} are due, on every store, beside the`,
    'least a pass must do on the same backend (the floor, `bench/reminders-raw.ts`). The users are seeded, untimed,',
    'through `auth.grant` (what core writes for each: the user, one active time authorization and its ledger entry,',
    'in one commit; SQLite seeded with `synchronous = NORMAL` and PostgreSQL on a connection with',
    '`synchronous_commit = off`, then measured on the defaults), all granted at one moment, their ends spread evenly',
    'over 300 days around the pass, one every 259.2 s: a third have ended already (their authorizations still',
    '`active` in the store), the rest end up to 200 days later. The service reminds at `leadDays: [3, 1]`, so a pass',
    `is due for the ${n(REMINDER_DUE)} whose access ends within 3 days (within a day at lead 1, the others at lead 3); its`,
    `notifier only counts. Per store, a warm-up window, then ${WINDOWS} windows 3 days apart, each a fresh ${n(REMINDER_DUE)} due, the pass`,
    'and the floor in alternating order, one call in flight; each pass is checked to have read and sent exactly the',
    'due ones, and its time is the median over the windows (the fastest and slowest beside it). The store sits',
    'behind a proxy that counts its calls by method; Redis commands and PostgreSQL statements are counted on the',
    'driver as in the store sections. What a pass does per due person: it loads the user with its whole queue (the',
    'end of access counts what is queued), claims the reminder (`incrementCounter`, before the notifier), and',
    'records the outcome after the send (`incrementCounter` again): three store calls, two of them writes (a commit',
    'each on SQLite and PostgreSQL).',
    '',
    '**The floor**: the due authorizations read by the same index in pages of 200, and one claim written per due',
    'person with the raw driver: on SQLite a second better-sqlite3 connection with the store\'s pragmas, a select on',
    'the partial index `(end_at, id)` and an autocommit upsert into a table of its own; on Redis `ZRANGE … BYSCORE',
    'LIMIT` of the index and `HMGET` of the page\'s records, then one `INCR` each; on PostgreSQL a named prepared',
    'select on the partial index and an autocommit upsert, on the section\'s pool; on MemoryStore, which has no',
    'driver below it, a sorted array of the active time authorizations (binary search, a slice per page) and a `Map`',
    'increment. It reads no user and records no outcome: one write per due person where the pass makes two and a',
    'load. **Ratio** = floor time ÷ pass time (the pass\'s rate as a share of the floor\'s). No target: the',
    'issue asks for the figures, and that a pass does not read every user: the table shows the authorizations a pass',
    'read and every store call it made, and "of which index pages" the time its reads of the index took.',
    '',
    remindersTable(rows),
    '',
    ...remindersNotes(rows),
  ]
}
