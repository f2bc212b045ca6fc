// `npm start` boots the Express example exactly as a person would run it.
import { describeNpmStart } from '@scanauth/example-shared/testing'

describeNpmStart('start', 'express')
