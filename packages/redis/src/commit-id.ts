/**
 * Names for commits, so a re-sent commit finds its receipt. They must be unique among the commits
 * of every process within a receipt's lifetime; they need not be secret (only the store sends
 * commits). A random part drawn once per process plus a counter gives that without a CSPRNG call per
 * commit (`randomBytes` costs microseconds, a commit's whole client-side work not many more).
 *
 * @module
 */
import { randomBytes } from 'node:crypto'

/** 72 random bits, fixed for this process. */
const processPart = randomBytes(9).toString('base64url')
let counter = 0

/** A new commit id: 12 characters for the process, then a base-36 counter. */
export function nextCommitId(): string {
  return processPart + (counter++).toString(36)
}
