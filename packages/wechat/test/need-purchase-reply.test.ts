// The default reply to a `need_purchase` scan: with core's `payments.phone` the result carries
// `payUrl`, and the reply links to it (needPurchaseReplyText), escaped for its attribute, since WeChat
// renders `<a href>` in a text reply; without it the fixed text, no link.
import type { ScanResult } from '@scanauth/core'
import { describe, expect, it } from 'vitest'
import { DEFAULT_REPLY_TEXTS, defaultReply, needPurchaseReplyText } from '../src/index'

const PAY_URL = 'https://app.example/auth/m/pay?ticket=Tk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG'

function needPurchase(payUrl?: string): ScanResult {
  return payUrl === undefined ? { result: 'need_purchase', userId: 7 } : { result: 'need_purchase', userId: 7, payUrl }
}

describe('the reply to a need_purchase scan', () => {
  it('with payUrl: the fixed text and the link to buy on this phone', () => {
    expect(defaultReply(needPurchase(PAY_URL))).toBe(needPurchaseReplyText(PAY_URL))
    expect(needPurchaseReplyText(PAY_URL)).toBe(`Please purchase to continue. <a href="${PAY_URL}">Buy on this phone</a>, or on the device.`)
    expect(needPurchaseReplyText(PAY_URL).startsWith(DEFAULT_REPLY_TEXTS.need_purchase)).toBe(true)
    // The push plays no part: the link has no time to tell.
    expect(defaultReply(needPurchase(PAY_URL), { CreateTime: '1772352000' })).toBe(needPurchaseReplyText(PAY_URL))
  })

  it('escapes the link for its attribute: it cannot close the attribute, open a tag or add a link', () => {
    const hostile = 'https://app.example/auth/m/pay?ticket=a&x="1"&y=<b>&z=\'3\'" onclick="alert(1)'
    const text = defaultReply(needPurchase(hostile))
    expect(text).toBe(needPurchaseReplyText(hostile))
    expect(text).toContain(
      '<a href="https://app.example/auth/m/pay?ticket=a&amp;x=&quot;1&quot;&amp;y=&lt;b&gt;&amp;z=&#39;3&#39;&quot; onclick=&quot;alert(1)">Buy on this phone</a>',
    )
    expect(text.match(/<a /g)).toHaveLength(1)
    expect(text.match(/"/g)).toHaveLength(2)
    expect(text).not.toContain('<b>')
  })

  it('without payUrl (no payments.phone), or an empty one, the fixed text with no link', () => {
    expect(defaultReply(needPurchase())).toBe(DEFAULT_REPLY_TEXTS.need_purchase)
    expect(defaultReply(needPurchase(''))).toBe(DEFAULT_REPLY_TEXTS.need_purchase)
    expect(defaultReply(needPurchase())).not.toContain('<a')
    expect(DEFAULT_REPLY_TEXTS.need_purchase).toBe('Please purchase to continue.')
  })
})
