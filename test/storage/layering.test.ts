/**
 * Storage sits below checkpoint in the import direction (DESIGN.md "Layout"): it moves bytes, and
 * `checkpoint/metadata` owns the metadata format. Scans the import statements of src/storage.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../../src');
const STORAGE = join(SRC, 'storage');
/** Folders storage may import besides itself. `state/key-groups.ts` gives handles their KeyGroupRange type. */
const ALLOWED_FOLDERS = ['storage', 'core'];
const ALLOWED_FILES = ['state/key-groups.ts'];
/** `import ... from '...'`, `export ... from '...'`, `import('...')` and side-effect `import '...'`. */
const IMPORT_RE = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Every relative import of `file`, as a path relative to src/ (`checkpoint/metadata/serializer.ts`). */
function srcImportsOf(file: string): string[] {
  const out: string[] = [];
  for (const m of readFileSync(file, 'utf8').matchAll(IMPORT_RE)) {
    const spec = m[1]!;
    if (spec.startsWith('.'))
      out.push(
        relative(SRC, resolve(dirname(file), spec))
          .split(sep)
          .join('/'),
      );
  }
  return out;
}

function importsFrom(dir: string): Array<{ file: string; target: string }> {
  return files(dir).flatMap((f) => srcImportsOf(f).map((target) => ({ file: relative(SRC, f).split(sep).join('/'), target })));
}

describe('storage layering', () => {
  it('no file in src/storage imports from src/checkpoint (nor the metadata serializer)', () => {
    const offenders = importsFrom(STORAGE).filter((i) => i.target.startsWith('checkpoint/') || i.target.includes('metadata/serializer'));
    expect(offenders).toEqual([]);
  });

  it('src/storage imports only itself and core (and the key-group range type)', () => {
    const offenders = importsFrom(STORAGE).filter((i) => !ALLOWED_FOLDERS.includes(i.target.split('/')[0]!) && !ALLOWED_FILES.includes(i.target));
    expect(offenders).toEqual([]);
  });

  it('the scan sees imports: storage imports core, checkpoint/metadata imports storage', () => {
    const fromStorage = importsFrom(STORAGE).map((i) => i.target);
    expect(fromStorage).toContain('core/errors.ts');
    expect(fromStorage).toContain('storage/paths.ts');
    expect(importsFrom(join(SRC, 'checkpoint', 'metadata')).map((i) => i.target)).toContain('storage/file-format.ts');
  });
});
