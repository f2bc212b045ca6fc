/**
 * The "remind me" subscription's redirect (`reminders` with a one-time subscription, docs/behaviour.md
 * B-remind-6…8) over a framework adapter's real routes: the link a signing-in scan offers, WeChat
 * coming back to `{base}/m/subscribed` with a confirmation (a page, and the consent a reminder then
 * uses), and every forgery a page with its 4xx and its code that stores nothing. Part of
 * {@link describeHttpRoutes}.
 *
 * @module
 */
import { describe, expect, it } from 'vitest'
import { createScanAuth, MemoryStore } from '@scanauth/core'
import { ManualClock } from '../clock'
import { TestNotifier } from '../notifier'
import { RecordingQrProvider } from '../qr'
import type { HttpRoutesHost } from './host'

const DAY = 24 * 3600 * 1000
const SUBSCRIPTION = { templateId: 'tpl-once', scene: 3 }

export function describeSubscribeRoutes(framework: string, host: HttpRoutesHost): void {
  describe(`the ${framework} adapter's reminder subscription redirect (m/subscribed)`, () => {
    it('a confirmation from the scan\'s link stores one consent, which the next reminder uses; replays and forgeries are refused pages', async () => {
      const clock = new ManualClock()
      const notifier = new TestNotifier(SUBSCRIPTION)
      let pages = ''
      const auth = createScanAuth({ store: new MemoryStore(), qr: new RecordingQrProvider(), now: clock.now, reminders: { leadDays: [3], notifier, url: () => pages } })
      const url = await host(auth, {})
      pages = `${url}/auth/m/`
      const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
      const scan = await auth.handleScan({ sceneStr, openid: 'alice' })
      const link = new URL((scan as { remindUrl: string }).remindUrl)
      const back = new URL(link.searchParams.get('redirect_url') as string)
      expect(back.toString()).toBe(`${url}/auth/m/subscribed`)
      const reserved = link.searchParams.get('reserved') as string
      const redirect = (query: Record<string, string>) => {
        const address = new URL(back)
        for (const [name, value] of Object.entries(query)) address.searchParams.set(name, value)
        return fetch(address, { redirect: 'manual' })
      }
      const confirm = { openid: 'alice', template_id: 'tpl-once', action: 'confirm', scene: '3', reserved }

      const forged = await redirect({ ...confirm, openid: 'mallory' })
      expect(forged.status).toBe(403)
      expect(forged.headers.get('x-scanauth-error')).toBe('subscription_state_invalid')
      const other = await redirect({ ...confirm, template_id: 'tpl-other' })
      expect(other.status).toBe(400)
      expect(other.headers.get('x-scanauth-error')).toBe('subscription_invalid')
      const cancelled = await redirect({ template_id: 'tpl-once', action: 'cancel', scene: '3', reserved })
      expect(cancelled.status).toBe(200)
      expect(await cancelled.text()).toContain('No reminder')

      const confirmed = await redirect(confirm)
      expect(confirmed.status).toBe(200)
      expect(confirmed.headers.get('cache-control')).toBe('no-store')
      expect(await confirmed.text()).toContain('You will be reminded')
      const replayed = await redirect(confirm)
      expect(replayed.status).toBe(403)
      expect(await replayed.text()).toContain('Nothing was changed.')

      clock.advance(5 * DAY)
      expect(await auth.sendReminders()).toMatchObject({ sent: 1, byChannel: { subscribe: 1 } })
      expect(notifier.messages).toEqual([expect.objectContaining({ openid: 'alice', subscribed: true, renewUrl: null })])
    })

    it('without a subscription to offer, m/subscribed is not ours: the app\'s own 404', async () => {
      const auth = createScanAuth({ store: new MemoryStore(), qr: new RecordingQrProvider(), reminders: { leadDays: [3], notifier: new TestNotifier(), url: 'https://app.example.test/auth/m/' } })
      expect(auth.reminderSubscription).toBe(false)
      const url = await host(auth, {})
      const answer = await fetch(`${url}/auth/m/subscribed?action=cancel`, { redirect: 'manual' })
      expect(answer.status).toBe(404)
      expect(answer.headers.get('x-scanauth-error')).toBeNull()
    })
  })
}
