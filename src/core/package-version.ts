/** Weir's version and package directory, from its package.json (found by walking up from this file: src/core in a clone, dist/src/core when installed). */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

let found: { readonly root: string; readonly version: string } | null = null;

function locate(): { readonly root: string; readonly version: string } {
  if (found !== null) return found;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = path.join(dir, 'package.json');
    try {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'weir-stream' && typeof pkg.version === 'string') return (found = { root: dir, version: pkg.version });
    } catch {
      // No package.json here: keep walking up.
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`weir's package.json not found above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

export function packageVersion(): string {
  return locate().version;
}

/** The directory of Weir's package.json (the clone, or node_modules/weir-stream). */
export function packageRoot(): string {
  return locate().root;
}
