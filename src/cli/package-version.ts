/** Weir's version, from its package.json (found by walking up from this file: src/cli in a clone, dist/src/cli when installed). */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export function packageVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = path.join(dir, 'package.json');
    try {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'weir-stream' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // No package.json here: keep walking up.
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`weir's package.json not found above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}
