/**
 * Connection URLs as the log and error messages show them: without their password.
 *
 * @module
 */

/**
 * `url` with its password replaced by `***`, in the user part (`redis://:secret@…`,
 * `postgres://user:secret@…`) and in a `password` query parameter (which node-postgres also reads).
 * A URL that does not parse is shown as `fallback`, since it might hold a password anywhere.
 */
export function redactUrl(url: string, fallback: string): string {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return fallback
  }
  if (u.password) u.password = '***'
  if (u.searchParams.has('password')) u.searchParams.set('password', '***')
  // URLSearchParams encodes the stars; the log reads better with them as they are.
  return u.toString().replace('password=%2A%2A%2A', 'password=***')
}
