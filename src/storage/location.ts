/**
 * The one place that decides what a storage location a user gives may be (`checkpointStorage`,
 * `restoreFrom`, `--checkpoint-dir`, `--from`, `--dir`): a plain path, a `file:` URL (made a path
 * here), or memory (`memory`, `memory:...`). Any other URL scheme is refused with an error naming
 * the option and the scheme, instead of being taken for a relative directory named `s3:`. A later
 * storage (S3) registers its scheme here.
 */
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../core/errors.ts';
import { MEMORY_SCHEME } from './paths.ts';

/** What a URL scheme's location becomes: the string the storage layer opens (a path, a memory key, later an object-store URL). */
export type SchemeResolver = (location: string) => string;

/** `scheme:` at the start; two characters at least, so a Windows drive (`C:\x`) stays a path. */
const SCHEME_RE = /^([A-Za-z][A-Za-z0-9+.-]+):/;

const schemes = new Map<string, SchemeResolver>([
  ['file', (location) => fileURLToPath(location)],
  [MEMORY_SCHEME.slice(0, -1), (location) => location],
]);

/**
 * Makes locations of `scheme` (without the colon, lower case) valid, resolved by `resolve`.
 * @internal for storages that come with a URL scheme (S3, later)
 */
export function registerStorageScheme(scheme: string, resolve: SchemeResolver): void {
  schemes.set(scheme.toLowerCase(), resolve);
}

/** The schemes a location may have, for messages: `file:, memory:`. */
function supported(): string {
  return [...schemes.keys()].map((s) => `${s}:`).join(', ');
}

/**
 * The location as the storage layer takes it: a plain path or `memory` unchanged, a `file:` URL
 * as its path.
 * @param option the option or flag that gave it, named in the error (`--checkpoint-dir`).
 * @throws ConfigError naming `option` and the scheme when the scheme is not supported or the URL is malformed.
 */
export function resolveStorageLocation(location: string, option: string): string {
  const match = SCHEME_RE.exec(location);
  if (match === null) return location;
  const scheme = match[1]!.toLowerCase();
  const resolve = schemes.get(scheme);
  if (resolve === undefined) {
    throw new ConfigError(
      option,
      `unsupported URL scheme '${scheme}:' in ${JSON.stringify(location)}: give a directory path or one of ${supported()}` +
        (scheme === 's3' ? ' (S3 storage is not supported yet)' : ''),
    );
  }
  try {
    return resolve(location);
  } catch (err) {
    throw new ConfigError(option, `invalid ${scheme}: location ${JSON.stringify(location)}: ${err instanceof Error ? err.message : String(err)}`);
  }
}
