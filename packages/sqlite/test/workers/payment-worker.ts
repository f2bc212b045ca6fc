/**
 * A worker process of payments-multiprocess.test.ts: testkit's payment worker on its own
 * SqliteStore (its own connection) on the file the parent names in `SCANAUTH_SQLITE_FILE`.
 */
import { createWechatPayClient, createWechatPayNotificationHandler, createWechatPayProvider } from '@scanauth/wechat-pay'
import { servePaymentWorker } from '@scanauth/testkit'
import { SqliteStore } from '@scanauth/sqlite'

await servePaymentWorker({
  openStore(env) {
    const store = new SqliteStore({ filename: env.SCANAUTH_SQLITE_FILE as string })
    return { store, close: () => store.close() }
  },
  provider: (settings) => createWechatPayProvider(createWechatPayClient(settings)),
  notificationHandler: createWechatPayNotificationHandler,
})
