/**
 * `describeReminderProcesses`: the cross-process checks of reminders (issue 28; docs/behaviour.md,
 * B-remind-3, B-remind-4) that every store runs on its real backend. Worker processes, each with
 * its own store connection and its own `createScanAuth` with `reminders: { leadDays: [3, 1] }`
 * ({@link serveReminderWorker}), run `sendReminders` over users the parent seeded through its own
 * `createScanAuth` on a manual clock:
 *
 * - four processes run the same pass at once, over 1,000 due users and others not due (renewed,
 *   or ending beyond the leads): every due user is told exactly once per lead, nobody else is told;
 * - one process, its notifier slowed, is killed mid-pass (SIGKILL) while the others run the same
 *   pass; then passes on the survivors: nobody is told twice for a lead, and a reminder the killed
 *   process had claimed and not sent is never sent (at most once); one it sent but had not yet
 *   recorded is not sent again either (its claim stands).
 *
 * Messages are counted across processes from the workers' log files (each message is appended as
 * its send completes, so the killed worker's are there too); the claims (`reminder:<user>:<authorization>:<lead>`)
 * and their outcomes are read straight from the backend.
 *
 * @module
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createScanAuth, type ScanAuth, type SendRemindersResult, type Store } from '@scanauth/core'
import { REMINDER_ENV, REMINDER_LEADS, type ReminderCommand, type ReminderReport, type SentReminder } from './reminder-protocol'
import { forkWorker, type WorkerHandle } from './worker-process'

export { serveReminderWorker, type ReminderWorkerOptions } from './reminder-worker'
export { REMINDER_ENV, REMINDER_LEADS, reminderLogFile, type ReminderCommand, type ReminderReport, type SentReminder } from './reminder-protocol'

/** One test's backing data, opened fresh by the store package for each test. */
export interface ReminderBacking {
  /** The parent's own store on it (it seeds the users). Migrated, so that workers find it ready. */
  store: Store
  /** Added to each worker's environment, naming the backing data (a file, a key prefix, a schema). */
  env: Record<string, string>
  /**
   * Every live counter whose key starts with `prefix`, read straight from the backend (not through
   * the store): key as the caller gave it → count.
   */
  counters(prefix: string): Promise<Map<string, number>>
  /** Called once every worker has exited: closes the parent's store and deletes the backing data. */
  cleanup(): Promise<void> | void
}

/** What a store package gives {@link describeReminderProcesses}. */
export interface ReminderProcessesOptions {
  /** Fresh, empty backing data for one test. */
  open(): Promise<ReminderBacking>
  /** The package's worker module, which calls {@link serveReminderWorker}. */
  workerPath: string
  /** The package's folder (the workers' working directory). */
  cwd: string
  /** Users due at the passes. Default 1,000. */
  dueUsers?: number
  /** Users not due: as many renewed (a queued grant lasting beyond the leads), as many ending beyond the leads. Default 100 each. */
  otherUsers?: number
  /** Seeding calls in flight at once in the parent. Default 8. */
  seedConcurrency?: number
}

type Worker = WorkerHandle<ReminderCommand, ReminderReport>

const DAY = 24 * 3600 * 1000
const TRIAL_DAYS = 7
/** Workers of each test. */
const WORKERS = 4
/** The slowed worker's time per send, ms, and the messages it delivers before it is killed. */
const SLOW_SEND_MS = 20
const KILL_AFTER = 60

/** Whom a test seeded: openid → user id, by kind. */
interface Seeded {
  /** The time the due users scanned (their trials end {@link TRIAL_DAYS} days later). */
  start: number
  due: Map<string, number>
  renewed: Map<string, number>
  later: Map<string, number>
}

/**
 * The passes' times from the start: within the 3-day lead of the due users' end (2 days left),
 * later within the same lead, within the 1-day lead (half a day left). The users seeded three days
 * later end 5, 4.5 and 3.5 days after those: beyond every lead.
 */
const at = (seeded: Seeded) => ({
  lead3: seeded.start + 5 * DAY,
  lead3Again: seeded.start + 5.5 * DAY,
  lead1: seeded.start + 6.5 * DAY,
})

/**
 * Registers the cross-process reminder tests of a store: see the module comment. Each test opens
 * its own backing data, seeds it and forks four workers on it.
 */
export function describeReminderProcesses(name: string, options: ReminderProcessesOptions): void {
  const DUE = options.dueUsers ?? 1000
  const OTHER = options.otherUsers ?? 100
  const CONCURRENCY = options.seedConcurrency ?? 8

  describe(`${name}: reminders across processes`, () => {
    let backing: ReminderBacking | null = null
    let logDir: string | null = null
    let workers: Worker[] = []

    afterEach(async () => {
      for (const w of workers) {
        if (w.child.exitCode !== null || w.child.signalCode !== null) continue
        w.tell({ kind: 'exit' })
        // Killed if it does not close its store in time.
        const timer = setTimeout(() => w.child.kill('SIGKILL'), 5000)
        void w.exited.then(() => clearTimeout(timer))
      }
      await Promise.all(workers.map((w) => w.exited))
      workers = []
      await backing?.cleanup()
      backing = null
      if (logDir !== null) await rm(logDir, { recursive: true, force: true })
      logDir = null
    })

    /** Fresh backing data, the users seeded on it through the parent's service, and four workers forked on it. */
    async function start(): Promise<{ workers: Worker[]; seeded: Seeded; backing: ReminderBacking; messages: () => Promise<SentReminder[]> }> {
      const opened = await options.open()
      backing = opened
      const dir = await mkdtemp(join(tmpdir(), 'scanauth-reminders-'))
      logDir = dir
      const forked = Array.from({ length: WORKERS }, (_, i) =>
        forkWorker<ReminderCommand, ReminderReport>({
          path: options.workerPath,
          cwd: options.cwd,
          execArgv: ['--import', 'tsx', '--conditions=@scanauth/source'],
          env: { ...opened.env, [REMINDER_ENV.worker]: String(i), [REMINDER_ENV.logDir]: dir },
          name: `reminder worker ${i}`,
        }),
      )
      workers = forked.map((f) => f.handle)
      // The workers start (tsx, a connection) while the parent seeds.
      const [seeded] = await Promise.all([seed(opened.store, DUE, OTHER, CONCURRENCY), ...forked.map((f) => f.ready)])
      return { workers, seeded, backing: opened, messages: () => readMessages(dir) }
    }

    it(`four processes run the same pass at once over ${DUE.toLocaleString('en-US')} due users: each is told exactly once per lead, nobody else`, { timeout: 120_000 }, async () => {
      const { workers: all, seeded, backing: data, messages } = await start()
      const time = at(seeded)

      const first = await passes(all, time.lead3)
      expectSplit(first, { sent: DUE, claimedElsewhere: (WORKERS - 1) * DUE, renewed: OTHER, checked: DUE + OTHER })
      console.info(`[reminders] ${name}: lead 3, ${WORKERS} processes at once: sent ${first.map((r) => r.sent).join(' + ')}`)
      // Later within the same lead, all four again: nothing more.
      const again = await passes(all, time.lead3Again)
      expectSplit(again, { sent: 0, claimedElsewhere: WORKERS * DUE, renewed: OTHER, checked: DUE + OTHER })
      const last = await passes(all, time.lead1)
      expectSplit(last, { sent: DUE, claimedElsewhere: (WORKERS - 1) * DUE, renewed: OTHER, checked: DUE + OTHER })
      console.info(`[reminders] ${name}: lead 1, ${WORKERS} processes at once: sent ${last.map((r) => r.sent).join(' + ')}`)

      const sent = await messages()
      expect(sent).toHaveLength(2 * DUE)
      expectToldOnlyDue(sent, seeded)
      const byUser = leadsByOpenid(sent)
      for (const openid of seeded.due.keys()) expect(byUser.get(openid), openid).toEqual([1, 3])
      // The store's side: one outcome `sent` per person and lead, on the claim of that person and lead.
      const claims = await readClaims(data)
      expect(claims.outcomes).toEqual(new Map(sent.map((m) => [`${m.userId}:${m.leadDays}`, { outcome: 'sent', count: 1 }])))
      expect([...claims.claimed.keys()].sort()).toEqual([...claims.outcomes.keys()].sort())
    })

    it('one process killed mid-pass (SIGKILL) while three others run it; passes on the survivors: nobody is told twice, a claim cut off is never sent', { timeout: 120_000 }, async () => {
      const { workers: all, seeded, backing: data, messages } = await start()
      const time = at(seeded)
      const [victim, ...survivors] = all as [Worker, ...Worker[]]

      // The victim's channel is slow: it is inside a send (its claim taken, the message not out) most of the time.
      const victimPass = victim.run({ kind: 'pass', now: time.lead3, delayMs: SLOW_SEND_MS })
      victimPass.catch(() => {}) // it never answers: it is killed
      await victim.progressed(KILL_AFTER)
      const survivorPasses = passes(survivors, time.lead3)
      // Killed once a survivor has delivered too: the four race for the same users when it dies.
      await Promise.race(survivors.map((s) => s.progressed(1)))
      victim.child.kill('SIGKILL')
      expect(await victim.exited).toEqual({ code: null, signal: 'SIGKILL' })
      await expect(victimPass).rejects.toThrow(/exited/)
      const first = await survivorPasses

      const afterKill = await messages()
      const byVictim = afterKill.filter((m) => m.worker === 0)
      expect(byVictim.length).toBeGreaterThanOrEqual(KILL_AFTER)
      // Every due user was told at lead 3 by someone, but for the one whose claim the victim held
      // when it died (if it died inside a send): that reminder is never sent (at most once, B-remind-4).
      const claimsAfterKill = await readClaims(data)
      const cutOff = [...seeded.due.values()].filter((userId) => !afterKill.some((m) => m.userId === userId))
      expect(cutOff.length, 'reminders claimed by the killed process and not sent').toBeLessThanOrEqual(1)
      for (const userId of cutOff) {
        expect(claimsAfterKill.claimed.has(`${userId}:3`), `user ${userId}: claimed`).toBe(true)
        expect(claimsAfterKill.outcomes.has(`${userId}:3`), `user ${userId}: no outcome`).toBe(false)
      }
      expect(afterKill).toHaveLength(DUE - cutOff.length)
      expect(first.reduce((n, r) => n + r.sent, 0) + byVictim.length).toBe(DUE - cutOff.length)
      console.info(`[reminders] ${name}: lead 3, the slowed process killed after ${byVictim.length} messages; the survivors sent ${first.map((r) => r.sent).join(' + ')}`)

      // The survivors again later within the lead: nothing, the cut-off one included.
      const again = await passes(survivors, time.lead3Again)
      expectSplit(again, { sent: 0, claimedElsewhere: survivors.length * DUE, renewed: OTHER, checked: DUE + OTHER })
      // The next lead: everyone once, the cut-off one included (its own claim).
      const last = await passes(survivors, time.lead1)
      expectSplit(last, { sent: DUE, claimedElsewhere: (survivors.length - 1) * DUE, renewed: OTHER, checked: DUE + OTHER })

      const sent = await messages()
      expect(sent).toHaveLength(2 * DUE - cutOff.length)
      expectToldOnlyDue(sent, seeded)
      const byUser = leadsByOpenid(sent)
      const cutOffOpenids = new Set([...seeded.due].filter(([, id]) => cutOff.includes(id)).map(([openid]) => openid))
      for (const openid of seeded.due.keys()) expect(byUser.get(openid), openid).toEqual(cutOffOpenids.has(openid) ? [1] : [1, 3])
      const claims = await readClaims(data)
      // A message the victim delivered just before it died may lack its outcome (killed between the
      // send and its record): the claim still stands, so it is not sent again either.
      const unrecorded = sent.filter((m) => m.worker === 0 && !claims.outcomes.has(`${m.userId}:${m.leadDays}`))
      expect(unrecorded.length + cutOff.length, 'reminders the killed process left between claim and outcome').toBeLessThanOrEqual(1)
      const recorded = sent.filter((m) => !unrecorded.includes(m))
      expect(claims.outcomes).toEqual(new Map(recorded.map((m) => [`${m.userId}:${m.leadDays}`, { outcome: 'sent', count: 1 }])))
      // Every due user was claimed once per lead, whether or not its message went out.
      expect([...claims.claimed.keys()].sort()).toEqual([...seeded.due.values()].flatMap((id) => [`${id}:1`, `${id}:3`]).sort())
      console.info(`[reminders] ${name}: the killed process left ${cutOff.length} claim without a send, ${unrecorded.length} send without its outcome`)
    })
  })
}

/** The same pass in every worker at once. */
function passes(workers: Worker[], now: number): Promise<ReminderReport[]> {
  return Promise.all(workers.map((w) => w.run({ kind: 'pass', now })))
}

/**
 * The passes together: `sent` messages in all, `claimedElsewhere` skipped as already reminded (by
 * another process or an earlier pass), `renewed` skipped as renewed in each, `checked` read by each;
 * nothing failed or stopped.
 */
function expectSplit(reports: ReminderReport[], expected: { sent: number; claimedElsewhere: number; renewed: number; checked: number }): void {
  const results: SendRemindersResult[] = reports.map((r) => r.result)
  const sum = (f: (r: SendRemindersResult) => number) => results.reduce((n, r) => n + f(r), 0)
  expect({
    sent: sum((r) => r.sent),
    reported: reports.reduce((n, r) => n + r.sent, 0),
    claimedElsewhere: sum((r) => r.skipped.already_reminded),
    unreachable: sum((r) => r.skipped.unreachable),
    failed: sum((r) => r.failed),
    stopped: results.some((r) => r.stopped),
  }).toEqual({ sent: expected.sent, reported: expected.sent, claimedElsewhere: expected.claimedElsewhere, unreachable: 0, failed: 0, stopped: false })
  for (const r of results) expect({ checked: r.checked, renewed: r.skipped.renewed }).toEqual({ checked: expected.checked, renewed: expected.renewed })
}

/** Every message went to a due user, as a time reminder of the lead its pass was in. */
function expectToldOnlyDue(sent: SentReminder[], seeded: Seeded): void {
  const strays = sent.filter((m) => seeded.due.get(m.openid) !== m.userId)
  expect(strays, 'messages to users not due').toEqual([])
  const end = new Date(seeded.start + TRIAL_DAYS * DAY).toISOString()
  expect(sent.filter((m) => m.endsAt !== end || !(REMINDER_LEADS as readonly (number | null)[]).includes(m.leadDays)), 'messages with another end or lead').toEqual([])
}

/** The leads each openid was told, sorted. */
function leadsByOpenid(sent: SentReminder[]): Map<string, number[]> {
  const out = new Map<string, number[]>()
  for (const m of sent) out.set(m.openid, [...(out.get(m.openid) ?? []), m.leadDays as number].sort((a, b) => a - b))
  return out
}

/**
 * The reminder counters in the backend: the claims (`reminder:<user>:<authorization>:<lead>`) by
 * `<user>:<lead>` with how many passes asked for them, and the outcomes recorded after a send.
 */
async function readClaims(backing: ReminderBacking): Promise<{ claimed: Map<string, number>; outcomes: Map<string, { outcome: string; count: number }> }> {
  const claimed = new Map<string, number>()
  const outcomes = new Map<string, { outcome: string; count: number }>()
  for (const [key, count] of await backing.counters('reminder:')) {
    const [, user, , lead, outcome] = key.split(':')
    const who = `${user}:${lead}`
    if (outcome === undefined) {
      // One authorization per user here (the trial), so one claim per user and lead.
      expect(claimed.has(who), `a second claim for ${who}: ${key}`).toBe(false)
      claimed.set(who, count)
    } else {
      expect(outcomes.has(who), `a second outcome for ${who}: ${key}`).toBe(false)
      outcomes.set(who, { outcome, count })
    }
  }
  return { claimed, outcomes }
}

/** Every message the workers' notifiers delivered, from their log files. */
async function readMessages(dir: string): Promise<SentReminder[]> {
  const out: SentReminder[] = []
  for (const file of (await readdir(dir)).sort()) {
    const text = await readFile(join(dir, file), 'utf8')
    for (const line of text.split('\n')) if (line !== '') out.push(JSON.parse(line) as SentReminder)
  }
  return out
}

/**
 * Seeds, through a `createScanAuth` on `store` and a manual clock: `due` users who scan now (their
 * 7-day trials end together), `other` who scan now and are granted 30 days (queued: renewed), and,
 * three days later, `other` who scan then (ending beyond every lead at the passes).
 */
async function seed(store: Store, due: number, other: number, concurrency: number): Promise<Seeded> {
  let now = Date.now()
  const start = now
  const auth = createScanAuth({
    store,
    qr: { createQr: async () => ({ url: 'https://qr.example.test/reminder-seed' }) },
    now: () => now,
    rateLimits: false,
    freeTrialDays: TRIAL_DAYS,
  })
  const users = async (prefix: string, count: number, then?: (auth: ScanAuth, openid: string) => Promise<unknown>) => {
    const out = new Map<string, number>()
    await inParallel(count, concurrency, async (i) => {
      const openid = `${prefix}-${i}`
      const { sceneStr } = await auth.createScene({ deviceId: `tv-${openid}` })
      const scan = await auth.handleScan({ sceneStr, openid })
      if (scan.result !== 'authorized') throw new Error(`seeding ${openid}: ${scan.result}`)
      await then?.(auth, openid)
      out.set(openid, scan.userId)
    })
    return out
  }
  const dueUsers = await users('due', due)
  const renewed = await users('renewed', other, (a, openid) => a.grant({ openid, type: 'time', durationSeconds: 30 * 24 * 3600 }))
  now += 3 * DAY
  const later = await users('later', other)
  return { start, due: dueUsers, renewed, later }
}

/** `run(0 … count − 1)`, `concurrency` at a time. */
async function inParallel(count: number, concurrency: number, run: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await run(next++)
    }),
  )
}
