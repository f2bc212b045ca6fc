/**
 * Waiting in tests for something another part of the system does (a notification, a subscription,
 * a closed connection): never a sleep of a set length, always a condition checked until it holds,
 * with a deadline far beyond any delay a store documents. Shared by the contract suite and the
 * stores' own tests.
 *
 * @module
 */

/** How long {@link eventually}, {@link told} and {@link within} wait before they fail: 10 s. */
export const NOTICE_MS = 10_000

/** Resolves once `check()` holds (checked every few milliseconds); fails naming `what` after `timeoutMs`. */
export async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = NOTICE_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Still waiting after ${timeoutMs} ms for: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

/** Resolves once a scene listener has recorded `sceneStr` in `heard`. */
export function told(heard: readonly string[], sceneStr: string): Promise<void> {
  return eventually(`a notification of ${sceneStr} (heard ${heard.length} others)`, () => heard.includes(sceneStr))
}

/** `promise`, or a failure naming `what` if it has not settled within {@link NOTICE_MS}. */
export async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Still waiting after ${NOTICE_MS} ms for: ${what}`)), NOTICE_MS)
  })
  try {
    return await Promise.race([promise, deadline])
  } finally {
    clearTimeout(timer)
  }
}
