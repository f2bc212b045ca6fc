/**
 * Delivering a push the way WeChat does: a signed POST of the XML message (encrypted in safe and
 * compatible mode), up to three deliveries when no answer comes within 5 seconds, and a check of the
 * answer as WeChat would make it.
 *
 * @module
 */
import { deliveryDeadline } from './deadline'
import { randomInt } from 'node:crypto'
import { buildXml, computeSignature, decryptMessage, encryptMessage, parseXml, textField, type XmlObject } from '@scanauth/wechat'
import { WechatEmulatorError } from './errors'
import type { EmulatorPushResult, EmulatorReply } from './types'

/** How pushes of one emulated account are signed, encrypted and delivered. */
export interface PushSettings {
  token: string
  appId: string
  accountId: string
  key: Buffer | null
  mode: 'plain' | 'compatible' | 'safe'
  timeoutMs: number
  attempts: number
  now: () => number
  /** Aborted when the emulator closes. */
  closed: AbortSignal
}

/** Pushes `fields` to `url` and reports what came back. */
export async function deliverPush(url: string, fields: Record<string, string>, settings: PushSettings): Promise<EmulatorPushResult> {
  const { body, query } = sealPush(fields, settings)
  const target = new URL(url)
  for (const [name, value] of Object.entries(query)) target.searchParams.set(name, value)

  let attempts = 0
  while (attempts < settings.attempts) {
    attempts++
    if (settings.closed.aborted) throw new WechatEmulatorError('closed', 'the emulator is closed')
    const deadline = deliveryDeadline(settings.timeoutMs, settings.closed)
    try {
      // The same request every time, as WeChat's retries are: the callback is expected to dedupe them.
      const response = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'text/xml; charset=utf-8', 'user-agent': 'Mozilla/4.0 (scanauth WeChat emulator)' },
        body,
        signal: deadline.signal,
      })
      const text = await response.text()
      const { reply, replyError } = readAnswer(response.status, text, fields, settings)
      return { attempts, status: response.status, body: text, reply, replyError, event: fields }
    } catch (error) {
      if (settings.closed.aborted) throw new WechatEmulatorError('closed', 'the emulator is closed', { cause: error })
      // No answer (timeout, refused, reset): WeChat tries again, three deliveries in all.
    } finally {
      deadline.done()
    }
  }
  return { attempts, status: null, body: null, reply: null, replyError: `no answer within ${settings.timeoutMs} ms after ${attempts} deliveries`, event: fields }
}

/** The body and signed query of a push in the configured mode. */
function sealPush(fields: Record<string, string>, settings: PushSettings): { body: string; query: Record<string, string> } {
  const timestamp = String(Math.floor(settings.now() / 1000))
  const nonce = String(randomInt(100_000_000, 10_000_000_000))
  const query: Record<string, string> = {
    signature: computeSignature(settings.token, timestamp, nonce),
    timestamp,
    nonce,
    openid: fields.FromUserName ?? '',
  }
  const plain = buildXml(orderedFields(fields))
  if (settings.mode === 'plain' || settings.key === null) return { body: plain, query }
  const encrypt = encryptMessage(settings.key, settings.appId, plain)
  query.encrypt_type = 'aes'
  query.msg_signature = computeSignature(settings.token, timestamp, nonce, encrypt)
  const body =
    settings.mode === 'safe'
      ? buildXml({ ToUserName: fields.ToUserName ?? '', Encrypt: encrypt })
      : buildXml({ ...orderedFields(fields), Encrypt: encrypt })
  return { body, query }
}

/** CreateTime is a bare number in WeChat's XML; everything else is CDATA. */
function orderedFields(fields: Record<string, string>): Record<string, string | number> {
  const out: Record<string, string | number> = {}
  for (const [name, value] of Object.entries(fields)) out[name] = name === 'CreateTime' ? Number(value) : value
  return out
}

/** Checks an answer as WeChat would: `success`/empty, or a well-formed (and, in safe mode, encrypted) reply to this user. */
function readAnswer(status: number, text: string, fields: Record<string, string>, settings: PushSettings): { reply: EmulatorReply | null; replyError: string | null } {
  if (status !== 200) return { reply: null, replyError: `HTTP ${status}` }
  if (text === '' || text === 'success') return { reply: null, replyError: null }
  let outer: XmlObject
  try {
    outer = parseXml(text)
  } catch {
    return { reply: null, replyError: 'the answer is neither "success" nor XML' }
  }
  let inner = outer
  const encrypt = textField(outer, 'Encrypt')
  if (encrypt !== undefined) {
    if (settings.key === null) return { reply: null, replyError: 'encrypted reply, but the account has no EncodingAESKey' }
    const timestamp = textField(outer, 'TimeStamp') ?? ''
    const nonce = textField(outer, 'Nonce') ?? ''
    if (textField(outer, 'MsgSignature') !== computeSignature(settings.token, timestamp, nonce, encrypt)) {
      return { reply: null, replyError: 'the reply MsgSignature is wrong' }
    }
    try {
      const opened = decryptMessage(settings.key, encrypt)
      if (opened.appId !== settings.appId) return { reply: null, replyError: 'the reply is encrypted for another appid' }
      inner = parseXml(opened.message)
    } catch {
      return { reply: null, replyError: 'the reply could not be decrypted' }
    }
  } else if (settings.mode === 'safe') {
    return { reply: null, replyError: 'safe mode needs an encrypted reply' }
  }
  const reply: EmulatorReply = {
    MsgType: textField(inner, 'MsgType') ?? '',
    ToUserName: textField(inner, 'ToUserName') ?? '',
    FromUserName: textField(inner, 'FromUserName') ?? '',
    CreateTime: textField(inner, 'CreateTime') ?? '',
    encrypted: encrypt !== undefined,
  }
  const content = textField(inner, 'Content')
  if (content !== undefined) reply.Content = content
  if (reply.ToUserName !== fields.FromUserName) return { reply, replyError: 'the reply is not addressed to the user who sent the push' }
  if (reply.FromUserName !== settings.accountId) return { reply, replyError: 'the reply is not from the account' }
  if (!/^\d{1,10}$/.test(reply.CreateTime)) return { reply, replyError: 'CreateTime must be seconds' }
  if (reply.MsgType === 'text' && content === undefined) return { reply, replyError: 'a text reply needs Content' }
  return { reply, replyError: null }
}
