import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../../src');
const ADAPTERS = 'core/adapters.ts';
const FORBIDDEN = /\b(Date\.now|Math\.random|setTimeout|setImmediate|setInterval)\s*\(/;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('determinism seams', () => {
  it('only the Clock/Scheduler/Random adapters touch the wall clock, timers and Math.random', () => {
    const offenders: string[] = [];
    for (const file of files(SRC)) {
      const rel = relative(SRC, file);
      if (rel === ADAPTERS) continue;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const code = line.replace(/\/\/.*$/, '');
          if (FORBIDDEN.test(code)) offenders.push(`${rel}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });

  it('the adapters file really is where they live', () => {
    expect(FORBIDDEN.test(readFileSync(join(SRC, ADAPTERS), 'utf8'))).toBe(true);
  });
});
