// The pure parts of the client: the SSE parser, Retry-After, backoff, the transport ladder, the wire readers.
import { describe, expect, it } from 'vitest'
import { SseParser } from '../src/sse-parser'
import { parseRetryAfter, DEFAULT_RETRY_AFTER_SECONDS } from '../src/retry-after'
import { backoffDelay, mayRetry } from '../src/backoff'
import { endsWait, fallbackTransport, firstTransport, streamVerdict } from '../src/transport'
import { readScene, readStatus } from '../src/wire'
import { ScanAuthClientError } from '../src/errors'
import { MAX_KEPT_SECRETS, SceneSecrets } from '../src/scene-secrets'

describe('SseParser', () => {
  it('dispatches events at blank lines, in any chunking, skipping comments', () => {
    const stream = ': heartbeat\n\nevent: status\ndata: {"status":"pending"}\n\n: heartbeat\n\nevent: status\ndata: {"status":"authorized"}\n\n'
    const whole = new SseParser().push(stream)
    expect(whole.map((e) => [e.event, e.data])).toEqual([
      ['status', '{"status":"pending"}'],
      ['status', '{"status":"authorized"}'],
    ])
    for (const size of [1, 2, 3, 7]) {
      const parser = new SseParser()
      const events = []
      for (let i = 0; i < stream.length; i += size) events.push(...parser.push(stream.slice(i, i + size)))
      expect(events, `chunks of ${size}`).toEqual(whole)
    }
  })

  it('reads CRLF and CR line ends (also split between chunks), multi-line data, ids, retry, a BOM', () => {
    const parser = new SseParser()
    const events = [...parser.push('\uFEFFretry: 3000\r\nid: 7\r'), ...parser.push('\nevent: status\rdata: a\rdata: b\r\r')]
    expect(events).toEqual([{ event: 'status', data: 'a\nb', id: '7', retry: 3000 }])
  })

  it('names an unnamed event message, drops an event without data, and never dispatches a cut one', () => {
    const parser = new SseParser()
    expect(parser.push('data: x\n\nevent: status\n\nevent: status\ndata: cut')).toEqual([{ event: 'message', data: 'x', id: undefined, retry: undefined }])
  })
})

describe('parseRetryAfter', () => {
  it('reads whole seconds and HTTP dates; anything else is the default', () => {
    expect(parseRetryAfter('30')).toBe(30)
    expect(parseRetryAfter(' 0 ')).toBe(0)
    const now = Date.parse('2026-01-01T00:00:00Z')
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', now)).toBe(10)
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0)
    for (const bad of [null, undefined, '', '-1', '1.5', 'soon']) expect(parseRetryAfter(bad, now), String(bad)).toBe(DEFAULT_RETRY_AFTER_SECONDS)
  })
})

describe('backoff', () => {
  it('waits between 0 and a ceiling that doubles up to maxMs', () => {
    const policy = { initialMs: 500, maxMs: 8000 }
    expect([1, 2, 3, 4, 5, 6, 40].map((retry) => backoffDelay(retry, policy, () => 0.999999))).toEqual([499, 999, 1999, 3999, 7999, 7999, 7999])
    expect(backoffDelay(3, policy, () => 0)).toBe(0)
  })

  it('bounds the attempts', () => {
    expect([1, 4, 5, 6].map((failures) => mayRetry(failures, { attempts: 5 }))).toEqual([true, true, false, false])
  })
})

describe('the transport ladder', () => {
  it('starts with the stream under auto, falls to the long poll, then the poll; a forced one has no fallback', () => {
    expect(firstTransport('auto')).toBe('events')
    expect(fallbackTransport('auto', 'events')).toBe('long-poll')
    expect(fallbackTransport('auto', 'long-poll')).toBe('poll')
    expect(fallbackTransport('auto', 'poll')).toBeUndefined()
    for (const forced of ['events', 'long-poll', 'poll'] as const) {
      expect(firstTransport(forced)).toBe(forced)
      expect(fallbackTransport(forced, forced)).toBeUndefined()
    }
  })

  it('takes only a 200 text/event-stream as a stream; 204 is an ended scene, 429 a rate limit', () => {
    expect(streamVerdict(200, 'text/event-stream; charset=utf-8')).toBe('stream')
    expect(streamVerdict(200, 'TEXT/EVENT-STREAM')).toBe('stream')
    expect(streamVerdict(204, null)).toBe('ended')
    expect(streamVerdict(429, 'application/json')).toBe('rate_limited')
    for (const [status, type] of [[200, 'text/html'], [200, null], [200, 'text/event-streamx'], [404, 'text/event-stream'], [502, 'text/html']] as const) {
      expect(streamVerdict(status, type), `${status} ${type}`).toBe('refused')
    }
  })

  it('ends a sign-in on anything but pending/scanned; a payment waits through need_purchase until its deadline', () => {
    expect(['pending', 'scanned', 'authorized', 'need_purchase', 'expired', 'denied'].map((s) => endsWait(s, 'sign-in'))).toEqual([false, false, true, true, true, true])
    expect(endsWait('need_purchase', 'payment')).toBe(false)
    expect(endsWait('need_purchase', 'payment', true)).toBe(true)
    expect(endsWait('authorized', 'payment')).toBe(true)
  })
})

describe('the wire readers', () => {
  it('read create_scene with and without qr_content', () => {
    const seed = { scene_str: 'pc_1', qr_url: 'https://mp.example/showqrcode?ticket=t', expires_in: 300 }
    expect(readScene(seed)).toEqual({ sceneStr: 'pc_1', qrUrl: seed.qr_url, qrContent: seed.qr_url, expiresIn: 300 })
    expect(readScene({ ...seed, qr_content: 'http://weixin.qq.com/q/x' }).qrContent).toBe('http://weixin.qq.com/q/x')
  })

  it('read create_scene’s poll_secret when there is one, and refuse one that cannot be a header value', () => {
    const seed = { scene_str: 'pc_1', qr_url: 'https://mp.example/showqrcode?ticket=t', expires_in: 300 }
    expect(readScene(seed).pollSecret).toBeUndefined()
    const secret = 'Ab0_-'.repeat(8) + 'xyz'
    expect(readScene({ ...seed, poll_secret: secret }).pollSecret).toBe(secret)
    for (const bad of ['', 'a b', 'line\nbreak', 42, null]) expect(() => readScene({ ...seed, poll_secret: bad }), String(bad)).toThrow(ScanAuthClientError)
  })

  it('read an authorized status, and refuse one that lacks its token', () => {
    const authorization = { type: 'points', end_at: null, remaining_points: 5 }
    expect(readStatus({ status: 'authorized', session_token: 't', authorization })).toEqual({
      status: 'authorized',
      sessionToken: 't',
      authorization: { type: 'points', endAt: null, remainingPoints: 5 },
    })
    expect(() => readStatus({ status: 'authorized', authorization })).toThrow(ScanAuthClientError)
    expect(() => readStatus('pending')).toThrow(ScanAuthClientError)
  })
})

describe('SceneSecrets', () => {
  it('keeps the most recent scenes’ secrets, and forgets on demand', () => {
    const secrets = new SceneSecrets()
    for (let i = 0; i <= MAX_KEPT_SECRETS; i++) secrets.keep(`pc_${i}`, `s${i}`)
    expect(secrets.get('pc_0')).toBeUndefined()
    expect(secrets.get('pc_1')).toBe('s1')
    // Kept again: the most recent once more, so the next one pushes out pc_2 instead.
    secrets.keep('pc_1', 's1b')
    secrets.keep('pc_new', 'n')
    expect(secrets.get('pc_1')).toBe('s1b')
    expect(secrets.get('pc_2')).toBeUndefined()
    secrets.forget('pc_1')
    expect(secrets.get('pc_1')).toBeUndefined()
  })
})
