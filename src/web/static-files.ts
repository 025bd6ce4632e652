/**
 * The dashboard's built files (Vite's output in `dist/dashboard/`), served by the web server. The
 * same directory is found from the compiled server (`dist/src/web/`) and from the sources
 * (`src/web/`, in tests); nothing is fetched from the network.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
  '.ico': 'image/x-icon',
};

/** Where the built dashboard is: `<package>/dist/dashboard`. */
export function dashboardDir(): string {
  const up = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  return path.basename(up) === 'dist' ? path.join(up, 'dashboard') : path.join(up, 'dist', 'dashboard');
}

/** The file for a URL path under `dir` (index.html for '/'), or null; never outside `dir`. */
export function staticFile(dir: string, pathname: string): { type: string; body: Buffer } | null {
  const rel = pathname === '/' ? 'index.html' : decodeURIComponent(pathname).replace(/^\/+/, '');
  const file = path.resolve(dir, rel);
  if (!file.startsWith(dir + path.sep)) return null;
  if (!existsSync(file) || !statSync(file).isFile()) return null;
  return { type: TYPES[path.extname(file)] ?? 'application/octet-stream', body: readFileSync(file) };
}
