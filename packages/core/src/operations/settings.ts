/** The configured lifetimes, in milliseconds, as the operations use them. */
export interface Lifetimes {
  sceneMs: number
  sessionMs: number
  freeTrialMs: number
}
