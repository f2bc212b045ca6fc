// The one build recipe of every package: ESM + CJS with .d.ts/.d.cts, sourcemaps, for Node 20.
import { defineConfig, type Options } from 'tsup'

/** A package's tsup config: its entry points, plus anything it must add (e.g. `noExternal`). */
export function packageBuild(entry: string[] | Record<string, string>, extra: Options = {}) {
  return defineConfig({
    entry,
    format: ['esm', 'cjs'],
    dts: true,
    clean: true,
    sourcemap: true,
    target: 'node20',
    ...extra,
  })
}
