// Reports on messages the account sent (reminders): a template message's delivery
// (TEMPLATESENDJOBFINISH) and the subscription events reach onMessage and are always answered
// `success`, whatever the hook returns or throws; two reports in one second stay two.
import { describe, expect, it } from 'vitest'
import { DELIVERY_REPORT_EVENTS, isDeliveryReport, type WechatMessage } from '../src/index'
import { ACCOUNT, setup } from './callback-setup'

const REPORTS: Array<[string, string]> = [
  ['TEMPLATESENDJOBFINISH', '<MsgID>200163836</MsgID><Status><![CDATA[failed:user block]]></Status>'],
  [
    'subscribe_msg_popup_event',
    '<SubscribeMsgPopupEvent><List><TemplateId><![CDATA[VRR0UEO9VJOLs0MHlU0OilqX6MVFDwH3_3gz3Oc0NIc]]></TemplateId><SubscribeStatusString><![CDATA[accept]]></SubscribeStatusString><PopupScene>2</PopupScene></List><List><TemplateId><![CDATA[9nLIlbOQZC5Y89AZteFEux3WCXRRRG5Wfzkpssu4bLI]]></TemplateId><SubscribeStatusString><![CDATA[reject]]></SubscribeStatusString><PopupScene>2</PopupScene></List></SubscribeMsgPopupEvent>',
  ],
  [
    'subscribe_msg_change_event',
    '<SubscribeMsgChangeEvent><List><TemplateId><![CDATA[VRR0UEO9VJOLs0MHlU0OilqX6MVFDwH3_3gz3Oc0NIc]]></TemplateId><SubscribeStatusString><![CDATA[reject]]></SubscribeStatusString></List></SubscribeMsgChangeEvent>',
  ],
  [
    'subscribe_msg_sent_event',
    '<SubscribeMsgSentEvent><List><TemplateId><![CDATA[VRR0UEO9VJOLs0MHlU0OilqX6MVFDwH3_3gz3Oc0NIc]]></TemplateId><MsgID>1700827132819554304</MsgID><ErrorCode>0</ErrorCode><ErrorStatus><![CDATA[success]]></ErrorStatus></List></SubscribeMsgSentEvent>',
  ],
]

/** A push of `event` with WeChat's own fields (nested lists as WeChat sends them). */
function report(event: string, fields: string, createTime: number, from = 'o_user'): string {
  return `<xml><ToUserName><![CDATA[${ACCOUNT}]]></ToUserName><FromUserName><![CDATA[${from}]]></FromUserName><CreateTime>${createTime}</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[${event}]]></Event>${fields}</xml>`
}

describe('delivery reports at the callback', () => {
  it.each(REPORTS)('%s: to onMessage, answered success even when the hook returns a text', async (event, fields) => {
    const received: WechatMessage[] = []
    const { callback, query, clock, calls } = setup({ onMessage: (m) => (received.push(m), 'ignored reply') })
    const res = await callback({ method: 'POST', query: query(), body: report(event, fields, Math.floor(clock.now() / 1000)) })
    expect(res).toMatchObject({ status: 200, body: 'success' })
    expect(received).toMatchObject([{ MsgType: 'event', Event: event, FromUserName: 'o_user' }])
    expect(calls).toEqual([])
  })

  it('nested lists arrive parsed, repeated elements as an array', async () => {
    const received: WechatMessage[] = []
    const { callback, query, clock } = setup({ onMessage: (m) => void received.push(m) })
    await callback({ method: 'POST', query: query(), body: report('subscribe_msg_popup_event', REPORTS[1]![1], Math.floor(clock.now() / 1000)) })
    expect(received[0]!.SubscribeMsgPopupEvent).toEqual({
      List: [
        { TemplateId: 'VRR0UEO9VJOLs0MHlU0OilqX6MVFDwH3_3gz3Oc0NIc', SubscribeStatusString: 'accept', PopupScene: '2' },
        { TemplateId: '9nLIlbOQZC5Y89AZteFEux3WCXRRRG5Wfzkpssu4bLI', SubscribeStatusString: 'reject', PopupScene: '2' },
      ],
    })
  })

  it('a failing hook is reported and the report still answered success; without a hook, success', async () => {
    const failing = setup({ onMessage: () => Promise.reject(new Error('recorder down')) })
    const at = Math.floor(failing.clock.now() / 1000)
    expect(await failing.callback({ method: 'POST', query: failing.query(), body: report('TEMPLATESENDJOBFINISH', REPORTS[0]![1], at) })).toMatchObject({ status: 200, body: 'success' })
    expect(failing.errors).toMatchObject([{ error: { message: 'recorder down' }, message: { Event: 'TEMPLATESENDJOBFINISH' } }])
    const bare = setup({ onMessage: undefined })
    expect(await bare.callback({ method: 'POST', query: bare.query(), body: report('subscribe_msg_change_event', REPORTS[2]![1], at) })).toMatchObject({ status: 200, body: 'success' })
  })

  it('two template reports for one user in one second are two deliveries (MsgID); a retry of one is one', async () => {
    const received: WechatMessage[] = []
    const { callback, query, clock } = setup({ onMessage: (m) => void received.push(m) })
    const at = Math.floor(clock.now() / 1000)
    const first = report('TEMPLATESENDJOBFINISH', '<MsgID>1001</MsgID><Status><![CDATA[success]]></Status>', at)
    const second = report('TEMPLATESENDJOBFINISH', '<MsgID>1002</MsgID><Status><![CDATA[success]]></Status>', at)
    for (const body of [first, second, first]) expect((await callback({ method: 'POST', query: query(), body })).body).toBe('success')
    expect(received.map((m) => m.MsgID)).toEqual(['1001', '1002'])
  })

  it('isDeliveryReport knows the four events in any case, and nothing else', () => {
    expect([...DELIVERY_REPORT_EVENTS]).toEqual(['templatesendjobfinish', 'subscribe_msg_popup_event', 'subscribe_msg_change_event', 'subscribe_msg_sent_event'])
    const event = (Event: string, MsgType = 'event') => ({ ToUserName: 'gh', FromUserName: 'o', CreateTime: '1', MsgType, Event })
    expect(isDeliveryReport(event('TEMPLATESENDJOBFINISH'))).toBe(true)
    expect(isDeliveryReport(event('templateSendJobFinish'))).toBe(true)
    expect(isDeliveryReport(event('SUBSCRIBE_MSG_SENT_EVENT'))).toBe(true)
    expect(isDeliveryReport(event('subscribe'))).toBe(false)
    expect(isDeliveryReport(event('TEMPLATESENDJOBFINISH', 'text'))).toBe(false)
  })
})
