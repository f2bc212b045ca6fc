/**
 * `@scanauth/example-shared/testing`: the suites both example servers run, each with its own
 * `startServer` or root script.
 *
 * @module
 */
export { describeExampleApp, type StartServer } from './app-suite'
export { describeNpmStart } from './start-suite'
