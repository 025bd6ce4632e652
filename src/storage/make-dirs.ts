/**
 * `mkdir -p` that reports the real reason a directory cannot be created. Node's recursive mkdir
 * says ENOENT when a missing parent cannot be made (a read-only mount gives EROFS, another user's
 * directory EACCES); on ENOENT this creates the missing directories one at a time, so the error is
 * the one the first of them got, naming it.
 */
import { existsSync, mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { errnoCode } from './atomic-write.ts';

export function makeDirsSync(dir: string, mode?: number): void {
  const options = mode === undefined ? {} : { mode };
  try {
    mkdirSync(dir, { recursive: true, ...options });
    return;
  } catch (err) {
    if (errnoCode(err) !== 'ENOENT') throw err;
  }
  const missing: string[] = [];
  for (let p = path.resolve(dir); !existsSync(p) && p !== path.dirname(p); p = path.dirname(p)) missing.unshift(p);
  for (const p of missing) {
    try {
      mkdirSync(p, options);
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw err;
    }
  }
}
