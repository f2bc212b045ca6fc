// The Koa example server (src/app.ts) over real sockets: the suite both example servers share.
import { startServer } from '../src/app'
import { describeExampleApp } from '../../express/test/app-suite'

describeExampleApp('koa', startServer)
