// The default reply to an `authorized` scan: with core's reminders offering a one-time subscription
// the result carries `remindUrl`, and the reply links to it (signedInReplyText), escaped for its
// attribute; without it the fixed text, no link.
import type { ScanResult } from '@scanauth/core'
import { describe, expect, it } from 'vitest'
import { DEFAULT_REPLY_TEXTS, defaultReply, signedInReplyText } from '../src/index'

const REMIND_URL = 'https://mp.weixin.qq.com/mp/subscribemsg?action=get_confirm&appid=wx1&scene=1&template_id=t&redirect_url=x&reserved=abc#wechat_redirect'

const authorized = (remindUrl?: string): ScanResult => (remindUrl === undefined ? { result: 'authorized', userId: 3 } : { result: 'authorized', userId: 3, remindUrl })

describe('the reply to an authorized scan', () => {
  it('with remindUrl: the fixed text and the "remind me" link, escaped', () => {
    expect(defaultReply(authorized(REMIND_URL))).toBe(signedInReplyText(REMIND_URL))
    expect(signedInReplyText(REMIND_URL)).toBe(`Signed in. <a href="${REMIND_URL.replace(/&/g, '&amp;')}">Remind me before it ends</a>`)
    const hostile = signedInReplyText('https://x.example/"><b>')
    expect(hostile.match(/<a /g)).toHaveLength(1)
    expect(hostile).not.toContain('<b>')
  })

  it('without remindUrl, or an empty one, the fixed text', () => {
    expect(defaultReply(authorized())).toBe(DEFAULT_REPLY_TEXTS.authorized)
    expect(defaultReply(authorized(''))).toBe(DEFAULT_REPLY_TEXTS.authorized)
  })
})
