// The Koa example server (src/app.ts) over real sockets: the suite both example servers share.
import { describeExampleApp } from '@scanauth/example-shared/testing'
import { startServer } from '../src/app'

describeExampleApp('koa', startServer)
