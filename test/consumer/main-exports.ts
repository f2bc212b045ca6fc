/**
 * The main exports of every public package: what the consumer imports, type-checks and runs. A new
 * package under `packages/` fails the coverage test until it has an entry here.
 */
export const MAIN_EXPORTS: Readonly<Record<string, readonly string[]>> = {
  '@scanauth/core': ['createScanAuth', 'MemoryStore', 'createHttpHandler', 'createFetchHandler', 'ScanAuthError'],
  '@scanauth/sqlite': ['SqliteStore'],
  '@scanauth/redis': ['RedisStore'],
  '@scanauth/wechat': ['createWechatQrProvider', 'createWechatCallback'],
  '@scanauth/wechat-emulator': ['startWechatEmulator', 'startWechatPayEmulator'],
  '@scanauth/wechat-pay': ['createWechatPayClient', 'createWechatPayProvider', 'createWechatPayNotificationHandler', 'createWechatPayFetchHandler', 'WechatPayError'],
  '@scanauth/cli': ['runCli', 'ScanAuthCliError'],
  '@scanauth/postgres': ['PostgresStore', 'PostgresStoreError'],
  '@scanauth/testkit': ['describeStoreContract'],
  '@scanauth/express': ['scanAuthRouter', 'wechatCallbackMiddleware', 'wechatPayNotifyMiddleware', 'keepRawBody'],
  '@scanauth/koa': ['scanAuthMiddleware', 'wechatCallbackMiddleware', 'wechatPayNotifyMiddleware'],
  '@scanauth/client': ['createScanAuthClient', 'ScanAuthClientError'],
}
