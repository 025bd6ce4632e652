/**
 * HA store URLs: which store a URL names and how it is shown. A URL carries the store's password
 * at most in its userinfo; every line a person reads (logs, errors, REST, the dashboard) shows it
 * masked, so one place turns a URL into its description.
 */

/** The URL schemes of the PostgreSQL HA store. */
export const POSTGRES_HA_SCHEMES: readonly string[] = ['postgres:', 'postgresql:'];
/** The URL scheme of the etcd HA store (`etcd://host:port[,host:port...][?prefix=weir/ha/]`). */
export const ETCD_HA_SCHEME = 'etcd:';

/** Which HA store a URL names: by its scheme, or null for any other. */
export function haStoreKind(url: string): 'postgres' | 'etcd' | null {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    return null;
  }
  if (POSTGRES_HA_SCHEMES.includes(protocol)) return 'postgres';
  return protocol === ETCD_HA_SCHEME ? 'etcd' : null;
}

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

/** Why `url` is no URL of the `kind` HA store (a sentence without its password), or null when it is one. */
export function haUrlProblem(url: string, kind: 'postgres' | 'etcd'): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'is not a URL';
  }
  if (kind === 'postgres' && !POSTGRES_HA_SCHEMES.includes(u.protocol))
    return `has scheme '${u.protocol}'; the PostgreSQL HA store takes postgres:// or postgresql://`;
  if (kind === 'etcd' && u.protocol !== ETCD_HA_SCHEME) return `has scheme '${u.protocol}'; the etcd HA store takes etcd://host:port`;
  if (u.hostname === '') return 'names no host';
  return null;
}
