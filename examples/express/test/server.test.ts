// `npm start` boots the Express example exactly as a person would run it.
import { describeNpmStart } from './start-suite'

describeNpmStart('start', 'express')
