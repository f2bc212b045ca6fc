// Test helper: whatever a test opened (emulators, servers) is closed after it, newest first.

/** Resources a test opened, closed in reverse order by `closeAll` (call it in afterEach). */
export function closer() {
  const steps: Array<() => Promise<unknown> | unknown> = []
  return {
    add<T extends { close(): Promise<unknown> | unknown }>(resource: T): T {
      steps.push(() => resource.close())
      return resource
    },
    async closeAll() {
      for (const step of steps.splice(0).reverse()) await step()
    },
  }
}
