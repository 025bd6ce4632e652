/** docs/options.md is what the option table says (`WEIR_UPDATE_DOCS=1` rewrites it). */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { optionsReference } from '../../src/api/options/reference.ts';

const FILE = join(import.meta.dirname, '../../docs/options.md');

describe('docs/options.md', () => {
  it('is written from the option table', () => {
    const expected = optionsReference();
    if (process.env.WEIR_UPDATE_DOCS === '1') writeFileSync(FILE, expected);
    expect(readFileSync(FILE, 'utf8')).toBe(expected);
    expect(expected).toContain('| `cluster.heartbeat.timeoutMs` | int | 10000 (at least intervalMs + 1) |');
    expect(expected).toContain("| `stateBackend.cacheEntriesMax` (type 'embedded') | int | 100000 |");
  });
});
