/**
 * Waiting for an event in the change-notification tests: never a sleep of a set length, always a
 * condition checked until it holds, with a deadline far beyond any delay the store documents.
 */

/** The longest any of these waits may take before the test fails: far more than `changePollMs`. */
export const NOTICE_MS = 10_000

/** Resolves once `condition()` holds (checked every few milliseconds), or fails after {@link NOTICE_MS}. */
export async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + NOTICE_MS
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

/** Resolves once a listener has recorded `sceneStr` in `heard`. */
export function told(heard: readonly string[], sceneStr: string): Promise<void> {
  return until(() => heard.includes(sceneStr), `a notification of ${sceneStr} (heard ${heard.length} others)`)
}

/** `promise`, or a failure naming `what` if it has not settled within {@link NOTICE_MS}. */
export async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), NOTICE_MS)
  })
  try {
    return await Promise.race([promise, deadline])
  } finally {
    clearTimeout(timer)
  }
}
