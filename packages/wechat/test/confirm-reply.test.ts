// The default reply to a `scanned` scan (confirm on the phone): the device named, safely, and the
// link to the confirm page. WeChat renders `<a href>` in a text reply, so the text is HTML.
import type { ScanResult } from '@scanauth/core'
import { describe, expect, it } from 'vitest'
import { confirmReplyText, DEFAULT_REPLY_TEXTS, defaultReply } from '../src/index'

type ScannedScanResult = Extract<ScanResult, { result: 'scanned' }>

const SCANNED_AT = Date.parse('2026-03-01T08:00:00Z')
const CONFIRM_URL = 'https://app.example/auth/confirm?ticket=Tk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG'
/** The push of the scan, as WeChat dates it: whole seconds. */
const PUSH = { CreateTime: String(SCANNED_AT / 1000) }

function scanned(deviceId: string, extra: Partial<ScannedScanResult> = {}): ScannedScanResult {
  return { result: 'scanned', deviceId, ticket: 'Tk', confirmUrl: CONFIRM_URL, expiresAt: SCANNED_AT + 120_000 + 37, ...extra }
}

describe('the reply to a scanned scan', () => {
  it('names the device and links to the confirm page, with the time left', () => {
    expect(defaultReply(scanned('Living-room TV'), PUSH)).toBe(
      `Sign-in request for “Living-room TV”. <a href="${CONFIRM_URL}">Confirm or deny</a> within 2 minutes. If you did not start this, tap Deny.`,
    )
  })

  it('says seconds when less than two minutes are left, and no duration without the push', () => {
    expect(defaultReply(scanned('tv', { expiresAt: SCANNED_AT + 45_500 }), PUSH)).toContain('</a> within 45 seconds. ')
    expect(defaultReply(scanned('tv', { expiresAt: SCANNED_AT + 100_000 }), PUSH)).toContain('</a> within 100 seconds. ')
    expect(defaultReply(scanned('tv', { expiresAt: SCANNED_AT + 1_000 }), PUSH)).toContain('</a> within 1 second. ')
    expect(defaultReply(scanned('tv', { expiresAt: SCANNED_AT + 300_000 }), PUSH)).toContain('</a> within 5 minutes. ')
    expect(defaultReply(scanned('tv'))).toBe(`Sign-in request for “tv”. <a href="${CONFIRM_URL}">Confirm or deny</a>. If you did not start this, tap Deny.`)
    // A push dated on another clock (or already past the deadline) says nothing of time rather than nonsense.
    expect(defaultReply(scanned('tv', { expiresAt: SCANNED_AT - 1000 }), PUSH)).not.toContain('within')
    expect(defaultReply(scanned('tv', { expiresAt: SCANNED_AT + 86_400_000 * 3 }), PUSH)).not.toContain('within')
  })

  it('escapes a label that carries markup: it cannot open a tag or forge a link', () => {
    const text = defaultReply(scanned('<script>alert(1)</script><a href="https://evil.example">Confirm</a> & "tv"'), PUSH)
    expect(text).toContain(
      '“&lt;script&gt;alert(1)&lt;/script&gt;&lt;a href=&quot;https://evil.example&quot;&gt;Confirm&lt;/a&gt; &amp; &quot;tv&quot;”',
    )
    expect(text).not.toContain('<script')
    expect(text.match(/<a /g)).toHaveLength(1)
    expect(text).not.toContain('evil.example"')
  })

  it('shows hidden characters (U+202E, U+200B) as U+FFFD, in the order they were sent', () => {
    const text = defaultReply(scanned('invoice\u202Etxt.exe\u200Bpc'), PUSH)
    expect(text).toContain('“invoice\uFFFDtxt.exe\uFFFDpc”')
    expect(text).not.toMatch(/[\u202E\u200B]/)
  })

  it('escapes the link for its attribute', () => {
    const text = confirmReplyText(scanned('tv', { confirmUrl: 'https://app.example/auth/confirm?x="1"&y=<2>&z=\'3\'' }), PUSH)
    expect(text).toContain('<a href="https://app.example/auth/confirm?x=&quot;1&quot;&amp;y=&lt;2&gt;&amp;z=&#39;3&#39;">Confirm or deny</a>')
  })

  it('without a confirm page, asks the scanner to tell the operator, with no link', () => {
    const text = defaultReply(scanned('tv <1>', { confirmUrl: undefined }), PUSH)
    expect(text).toBe('Sign-in request for “tv &lt;1&gt;”. It cannot be confirmed here: the confirm page is not set up. Please tell the operator of this service.')
    expect(text).not.toContain('<a')
  })

  it('leaves the other results their fixed texts', () => {
    const results: ScanResult[] = [{ result: 'authorized', userId: 1 }, { result: 'need_purchase', userId: 1 }, { result: 'invalid' }]
    expect(results.map((r) => defaultReply(r))).toEqual([DEFAULT_REPLY_TEXTS.authorized, DEFAULT_REPLY_TEXTS.need_purchase, DEFAULT_REPLY_TEXTS.invalid])
    expect(Object.keys(DEFAULT_REPLY_TEXTS)).toEqual(['authorized', 'need_purchase', 'invalid'])
  })
})
