/**
 * The browser the dashboard's browser tests drive: `WEIR_CHROMIUM`, else /usr/bin/chromium. Where
 * it is missing they are skipped with one line naming the fix, unless CI (`CI=true`) requires them.
 */
import { accessSync, constants } from 'node:fs';

export interface ChromiumLookup {
  /** The executable the tests would launch. */
  readonly path: string;
  /** Whether it exists and is executable. */
  readonly found: boolean;
  /** CI requires the browser tests: a missing browser fails them instead of skipping them. */
  readonly required: boolean;
  /** The one line that says the browser is missing and how to get it. */
  readonly missingLine: string;
}

export function findChromium(env: NodeJS.ProcessEnv = process.env): ChromiumLookup {
  const path = env.WEIR_CHROMIUM || '/usr/bin/chromium';
  let found = true;
  try {
    accessSync(path, constants.X_OK);
  } catch {
    found = false;
  }
  const required = env.CI === 'true';
  const missingLine =
    `dashboard browser tests ${required ? 'FAILED (CI=true requires them)' : 'skipped'}: no Chromium at ${path}; ` +
    'install it (apt-get install chromium) or set WEIR_CHROMIUM to a Chromium executable';
  return { path, found, required, missingLine };
}
