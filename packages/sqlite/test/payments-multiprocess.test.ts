// Issue 18's cross-process checks on SQLite (testkit's describePaymentProcesses): two worker
// processes (workers/payment-worker.ts), each with its own SqliteStore on one file, apply the same
// WeChat Pay notification at the same moment, or recover one whose process was killed between
// verification and grant; what they did is read straight from the file (dumpFile).
import { fileURLToPath } from 'node:url'
import { startWechatPayEmulator } from '@scanauth/wechat-emulator'
import { createWechatPayClient, createWechatPayProvider } from '@scanauth/wechat-pay'
import { describePaymentProcesses } from '@scanauth/testkit'
import { SqliteStore } from '@scanauth/sqlite'
import { dumpFile, tempDb } from './support/files'

describePaymentProcesses('SqliteStore', {
  startEmulator: startWechatPayEmulator,
  provider: (settings) => createWechatPayProvider(createWechatPayClient(settings)),
  workerPath: fileURLToPath(new URL('./workers/payment-worker.ts', import.meta.url)),
  cwd: fileURLToPath(new URL('..', import.meta.url)),
  async open() {
    const temp = await tempDb()
    // Opened (and so migrated) by the parent before any worker starts.
    const store = new SqliteStore({ filename: temp.filename })
    return {
      store,
      env: { SCANAUTH_SQLITE_FILE: temp.filename },
      dump: () => dumpFile(temp.filename),
      cleanup: async () => {
        await store.close()
        await temp.remove()
      },
    }
  },
})
