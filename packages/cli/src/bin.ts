#!/usr/bin/env node
// The `scanauth` command. Sets the exit status and lets the process end by itself once the store's
// connections are closed, so that everything written to standard output is flushed.
import { runCli } from './run'

// A reader that went away (`scanauth ledger … | head`) is not a failure of the command.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error
})

void runCli(process.argv.slice(2)).then((status) => {
  process.exitCode = status
})
