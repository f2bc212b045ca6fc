/**
 * The one WeChat Pay world of the notification suite (`describeWechatPayNotifyRoutes` of the
 * testkit): the emulator, this package's real client and provider against it, a selling scanauth,
 * and the handler options the app under test mounts. The testkit may not depend on WeChat Pay, so
 * each adapter's tests pass this in: the Fetch handler's from here, the Express and Koa middlewares'
 * by a relative import (as Koa's tests already take Express's fixtures).
 */
import type { Store } from '@scanauth/core'
import { sellingAuth, type NotifyRefusal, type NotifyWorld, type NotifyWorldOptions } from '@scanauth/testkit'
import { startWechatPayEmulator } from '@scanauth/wechat-emulator'
import { createWechatPayClient, createWechatPayProvider, type WechatPayNotificationHandlerOptions } from '../../src/index'

/** Options of {@link payWorld}: the suite's, and where the orders are kept. */
export interface PayWorldOptions extends NotifyWorldOptions {
  /** The store of the selling scanauth (the caller closes it). Default a new MemoryStore. */
  store?: Store
}

/** A world for one test of the notification suite; see `NotifyWorldFactory` of the testkit. */
export async function payWorld(options: PayWorldOptions): Promise<NotifyWorld<WechatPayNotificationHandlerOptions>> {
  const pay = await startWechatPayEmulator({ mchid: '1900000109', appid: 'wx_notify_e2e', retrySchedule: options.retrySchedule })
  const client = createWechatPayClient({ ...pay.clientOptions(), notifyUrl: options.notifyUrl })
  const selling = sellingAuth({ provider: createWechatPayProvider(client), store: options.store })
  const refusals: NotifyRefusal[] = []
  const handlerOptions: WechatPayNotificationHandlerOptions = {
    auth: selling.auth,
    verificationKeys: pay.verificationKeys,
    apiV3Key: pay.apiV3Key,
    onError: (error, answer) => void refusals.push({ error, answer }),
  }
  return { ...selling, pay, handlerOptions, refusals, close: () => pay.close() }
}
