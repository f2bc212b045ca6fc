/**
 * The check WeChat Pay makes of every API request before anything else: the `Authorization`
 * header's signature over `METHOD\nURL\nTIMESTAMP\nNONCE\nBODY\n`, rebuilt from the raw request
 * target and the raw body bytes, with the merchant key registered for `serial_no`, the merchant id
 * and the timestamp window. A failure is a 401 `SIGN_ERROR` carrying `detail.sign_information` (the
 * message WeChat rebuilt), which is how merchants debug their signing.
 *
 * @module
 */
import { payError, type PayAnswer } from './answers'
import type { MerchantKeys } from './keys'
import { parseAuthorization, rsaVerify, signedMessage } from './signature'

/** How much of the rebuilt message `truncated_sign_message` shows. */
const SIGN_MESSAGE_SHOWN = 256

/** The request as received, and what to check it against. */
export interface SignedRequest {
  method: string
  /** The request target exactly as sent: path and query (`req.url`). */
  target: string
  authorization: string | undefined
  body: Buffer
  mchid: string
  merchantKeys: MerchantKeys
  /** The emulator's clock, epoch milliseconds. */
  now: number
  toleranceSeconds: number
}

/** Null when the request is signed correctly, else the 401 to answer. */
export function checkRequestSignature(request: SignedRequest): PayAnswer | null {
  const params = parseAuthorization(request.authorization)
  // Without a readable header the message is rebuilt with empty timestamp and nonce, so
  // sign_information still shows the method, URL and body WeChat saw.
  const timestamp = 'error' in params ? '' : params.timestamp
  const nonce = 'error' in params ? '' : params.nonce_str
  const message = signedMessage([request.method, request.target, timestamp, nonce, request.body])
  const refuse = (reason: string): PayAnswer => {
    const text = message.toString('utf8')
    return payError(401, 'SIGN_ERROR', `签名错误 (${reason})`, {
      detail: { issue: reason },
      field: 'signature',
      location: 'authorization',
      sign_information: {
        method: request.method,
        url: request.target,
        sign_message_length: message.length,
        truncated_sign_message: text.length > SIGN_MESSAGE_SHOWN ? text.slice(0, SIGN_MESSAGE_SHOWN) : text,
      },
    })
  }
  if ('error' in params) return refuse(params.error)
  if (params.mchid !== request.mchid) return refuse(`mchid ${params.mchid} in Authorization is not this merchant (${request.mchid})`)
  if (!/^\d{1,12}$/.test(params.timestamp)) return refuse('timestamp must be Unix seconds')
  const skew = Number(params.timestamp) - Math.floor(request.now / 1000)
  if (Math.abs(skew) > request.toleranceSeconds) {
    return refuse(`timestamp is ${Math.abs(skew)} s ${skew < 0 ? 'old' : 'ahead'}; allowed ±${request.toleranceSeconds} s`)
  }
  const key = request.merchantKeys.get(params.serial_no)
  if (key === undefined) return refuse(`no merchant certificate with serial_no ${params.serial_no}`)
  if (!rsaVerify(message, params.signature, key)) return refuse('the signature does not match the message')
  return null
}
