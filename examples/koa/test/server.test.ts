// `npm run start:koa` boots the Koa example exactly as a person would run it.
import { describeNpmStart } from '@scanauth/example-shared/testing'

describeNpmStart('start:koa', 'koa')
