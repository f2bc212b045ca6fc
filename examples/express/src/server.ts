/**
 * `npm start`: the Express example server, configured from the environment (see
 * `examples/shared/src/config.ts`). With no WeChat account configured it starts the WeChat emulator
 * in-process, so it runs anywhere.
 */
import { startServer } from './app'
import { main } from '@scanauth/example-shared'

await main(startServer)
