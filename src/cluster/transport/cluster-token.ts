/**
 * The cluster token: the secret every job master and task manager of one cluster shares, proved
 * (never sent) in the connection handshake (handshake.ts). It comes from a file (readable by its
 * owner only, as a secret should be) or from WEIR_CLUSTER_TOKEN.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigError, errorMessage } from '../../core/errors.ts';

/** The environment variable that holds the token when no file is given. */
export const CLUSTER_TOKEN_ENV = 'WEIR_CLUSTER_TOKEN';
/** Shorter tokens are refused: they can be guessed. generateClusterToken gives 43 characters. */
export const MIN_CLUSTER_TOKEN_CHARS = 16;

/**
 * The token: the trimmed content of `tokenFile` when given, else WEIR_CLUSTER_TOKEN from `env`,
 * else null (none configured).
 * @throws ConfigError naming the file (missing, unreadable) or WEIR_CLUSTER_TOKEN, or either for
 * a token shorter than 16 characters.
 */
export function loadClusterToken(o: { tokenFile: string | null; env: NodeJS.ProcessEnv }): string | null {
  if (o.tokenFile !== null) {
    let text: string;
    try {
      text = readFileSync(o.tokenFile, 'utf8');
    } catch (err) {
      throw new ConfigError(o.tokenFile, `cannot read the cluster token file: ${errorMessage(err)}`);
    }
    return checked(text.trim(), o.tokenFile);
  }
  const value = o.env[CLUSTER_TOKEN_ENV];
  return value === undefined ? null : checked(value.trim(), CLUSTER_TOKEN_ENV);
}

/** A new random token: 32 random bytes as base64url (43 characters). */
export function generateClusterToken(): string {
  return randomBytes(32).toString('base64url');
}

function checked(token: string, source: string): string {
  if (token.length < MIN_CLUSTER_TOKEN_CHARS)
    throw new ConfigError(
      source,
      `the cluster token has ${token.length} characters, at least ${MIN_CLUSTER_TOKEN_CHARS} are needed (a random one: node -e "console.log(require('crypto').randomBytes(32).toString('base64url'))")`,
    );
  return token;
}
