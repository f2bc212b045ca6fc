// The reminder error mapping as a pure function: one case per documented code, then the token codes
// (after their one refresh), the HTTP failures and what is not in the table.
import { describe, expect, it } from 'vitest'
import { classifyReminderError, REMINDER_ERRCODES, WechatApiError, WechatHttpError } from '../src/index'

const api = (code: number, errmsg = 'from WeChat') => new WechatApiError('cgi-bin/message/template/send', code, errmsg)

describe('classifyReminderError: the documented codes', () => {
  it.each([
    [43004, 'unreachable', false, /require subscribe/],
    [43101, 'unreachable', false, /user refuse to accept the msg/],
    [45015, 'unreachable', false, /out of time limit/],
    [40003, 'unreachable', false, /invalid openid/],
    [40037, 'unreachable', true, /invalid template_id/],
    [47003, 'unreachable', true, /argument invalid/],
    [48001, 'unreachable', true, /api unauthorized/],
    [45009, 'stop', false, /daily API quota/],
    [45047, 'unreachable', false, /response count limit/],
    [45011, 'stop', false, /minute quota/],
    [40013, 'stop', false, /invalid appid/],
    [40125, 'stop', false, /invalid appsecret/],
    [40243, 'stop', false, /frozen/],
    [40164, 'stop', false, /IP whitelist/],
    [41001, 'stop', false, /access token missing/],
    [-1, 'retry', false, /system busy/],
  ] as const)('%i → %s', (code, kind, configuration, meaning) => {
    const failure = classifyReminderError(api(code))
    expect(failure.kind).toBe(kind)
    expect(failure.reason).toMatch(new RegExp(`^errcode ${code} \\(`))
    expect(failure.reason).toMatch(meaning)
    if (failure.kind === 'unreachable') expect(failure.configuration).toBe(configuration)
  })

  it('the table has exactly the codes tested above', () => {
    expect(Object.keys(REMINDER_ERRCODES).map(Number).sort((a, b) => a - b)).toEqual(
      [-1, 40003, 40013, 40037, 40125, 40164, 40243, 41001, 43004, 43101, 45009, 45011, 45015, 45047, 47003, 48001],
    )
  })
})

describe('classifyReminderError: everything else', () => {
  it.each([40001, 40014, 42001])('%i after the one refresh → stop (the fresh token was refused too)', (code) => {
    expect(classifyReminderError(api(code))).toEqual({ kind: 'stop', reason: `errcode ${code}: the access token was refused again after a refresh` })
  })

  it('an unknown errcode → retry, naming the code and WeChat’s message (no personal data is in either)', () => {
    expect(classifyReminderError(api(99999, 'something new rid: 1'))).toEqual({ kind: 'retry', reason: 'errcode 99999 (something new rid: 1)' })
  })

  it('timeout, network, a 5xx and a garbled answer → retry; a 4xx → stop', () => {
    const endpoint = 'cgi-bin/message/custom/send'
    expect(classifyReminderError(new WechatHttpError(endpoint, 'timeout', 'x'))).toEqual({ kind: 'retry', reason: `timeout (${endpoint})` })
    expect(classifyReminderError(new WechatHttpError(endpoint, 'network', 'x'))).toEqual({ kind: 'retry', reason: `network (${endpoint})` })
    expect(classifyReminderError(new WechatHttpError(endpoint, 'bad_response', 'x', { httpStatus: 200 }))).toEqual({ kind: 'retry', reason: `bad_response (${endpoint})` })
    expect(classifyReminderError(new WechatHttpError(endpoint, 'http_status', 'x', { httpStatus: 503 }))).toEqual({ kind: 'retry', reason: `HTTP 503 from ${endpoint}` })
    expect(classifyReminderError(new WechatHttpError(endpoint, 'http_status', 'x', { httpStatus: 404 }))).toEqual({ kind: 'stop', reason: `HTTP 404 from ${endpoint}` })
  })

  it('anything that is not a WeChat error → retry with its message', () => {
    expect(classifyReminderError(new TypeError('boom'))).toEqual({ kind: 'retry', reason: 'boom' })
    expect(classifyReminderError('odd')).toEqual({ kind: 'retry', reason: 'odd' })
  })
})
