/**
 * Who the page acts as: its callers (the login cookie, the desktop window's admin token) are the
 * person who runs the app. The API has no "who am I" yet; a person with their own JWT on the
 * control plane would see their own connections without Sign in.
 */
export const ME = 'local';
