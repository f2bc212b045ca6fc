// `npm run start:koa` boots the Koa example exactly as a person would run it.
import { describeNpmStart } from '../../express/test/start-suite'

describeNpmStart('start:koa', 'koa')
