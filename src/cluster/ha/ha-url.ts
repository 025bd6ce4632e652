/**
 * HA store URLs: which store a URL names and how it is shown. A URL carries the store's password
 * at most in its userinfo; every line a person reads (logs, errors, REST, the dashboard) shows it
 * masked, so one place turns a URL into its description.
 */

/** The URL schemes of the PostgreSQL HA store. */
export const POSTGRES_HA_SCHEMES: readonly string[] = ['postgres:', 'postgresql:'];

/** The URL for messages: the password never appears. */
export function describeHaUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return '(an unparsable URL)';
  }
}

/** Why `url` is no PostgreSQL HA store URL (a sentence without its password), or null when it is one. */
export function postgresHaUrlProblem(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'is not a URL';
  }
  if (!POSTGRES_HA_SCHEMES.includes(u.protocol)) return `has scheme '${u.protocol}'; the PostgreSQL HA store takes postgres:// or postgresql://`;
  if (u.hostname === '') return 'names no host';
  return null;
}
