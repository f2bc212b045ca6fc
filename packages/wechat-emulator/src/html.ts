/**
 * HTML escaping for the emulators' pages: everything they show that came from outside (scenes,
 * openids, replies, orders) goes through here, so nothing of it is ever parsed as markup.
 *
 * @module
 */

/** Escapes text for an HTML attribute (double- or single-quoted) or element. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}
