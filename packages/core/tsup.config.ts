import { defineConfig } from 'tsup'

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  // nanoid 5 is ESM-only: bundle it so the CommonJS build works on every Node 20.
  noExternal: ['nanoid'],
})
