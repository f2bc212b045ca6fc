// The telemetry of reminders (docs/behaviour.md B-remind-10): a pass is one `scanauth.reminders` span
// with counts, and each message adds to the `scanauth.reminders` counter by channel and outcome;
// neither names a person (no openid, no user id, no link).
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createScanAuth, MemoryStore } from '@scanauth/core'
import { ManualClock, RecordingQrProvider, TestNotifier } from '@scanauth/testkit'
import { registerInMemorySdk, spanAttributeText, type InMemorySdk } from './support/telemetry'

const DAY = 86_400_000

let sdk: InMemorySdk
beforeEach(() => {
  sdk = registerInMemorySdk()
})
afterEach(async () => {
  await sdk.unregister()
})

describe('telemetry of reminders', () => {
  it('a pass is one span with its counts; each message is counted by channel and outcome; nothing personal', async () => {
    const clock = new ManualClock()
    const notifier = new TestNotifier()
    notifier.answer = (m) => (m.openid === 'o-unreachable' ? { outcome: 'unreachable', reason: 'no channel' } : { outcome: 'sent', channel: 'template' })
    const auth = createScanAuth({ store: new MemoryStore(), qr: new RecordingQrProvider(), now: clock.now, reminders: { leadDays: [3], notifier, url: 'https://app.example.test/auth/m/' } })
    for (const openid of ['o-alice', 'o-bob', 'o-unreachable']) {
      const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
      await auth.handleScan({ sceneStr, openid })
    }
    clock.advance(5 * DAY)
    expect(await auth.sendReminders()).toMatchObject({ due: 3, sent: 2, skipped: { unreachable: 1 } })
    const [span] = sdk.spansNamed('scanauth.reminders')
    expect(span?.attributes).toEqual({ 'scanauth.reminders.due': 3, 'scanauth.reminders.sent': 2 })
    expect(await sdk.points('scanauth.reminders')).toEqual(
      expect.arrayContaining([
        { attributes: { 'scanauth.reminder.channel': 'template', 'scanauth.reminder.outcome': 'sent' }, value: 2 },
        { attributes: { 'scanauth.reminder.channel': 'none', 'scanauth.reminder.outcome': 'unreachable' }, value: 1 },
      ]),
    )
    const recorded = spanAttributeText(sdk.spans()).join(" ") + JSON.stringify(await sdk.points('scanauth.reminders'))
    for (const personal of ['o-alice', 'o-bob', 'app.example.test']) expect(recorded).not.toContain(personal)
  })
})
