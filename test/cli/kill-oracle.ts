/**
 * The oracle of the SIGKILL tests, independent of the engine: reads the committed part files of
 * kill-job.ts with plain fs and compares them with what the input must produce: per key, the lines
 * `<key> <n> <i>` for n = 1, 2, ... and i = key, key + KEYS, ... in exactly that order, each once.
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

export interface OutputCheck {
  readonly lines: number;
  readonly expected: number;
  /** Empty when the output is exactly right; else at most a few lines naming what is wrong. */
  readonly problems: string[];
}

/** Committed lines per subtask, files in checkpoint order (the order the sink committed them). */
export function committedBySubtask(outputDir: string): Map<number, string[]> {
  const files = readdirSync(outputDir)
    .map((n) => ({ n, m: /^part-(\d+)-(\d+)$/.exec(n) }))
    .filter((f): f is { n: string; m: RegExpExecArray } => f.m !== null)
    .map((f) => ({ name: f.n, subtask: Number(f.m[1]), checkpoint: Number(f.m[2]) }))
    .sort((a, b) => a.subtask - b.subtask || a.checkpoint - b.checkpoint);
  const out = new Map<number, string[]>();
  for (const f of files) {
    const lines = readFileSync(path.join(outputDir, f.name), 'utf8')
      .split('\n')
      .filter((l) => l.length > 0);
    out.set(f.subtask, [...(out.get(f.subtask) ?? []), ...lines]);
  }
  return out;
}

export function checkKillOutput(outputDir: string, records: number, keys: number): OutputCheck {
  const perKey = new Map<string, string[]>();
  let lines = 0;
  for (const subtaskLines of committedBySubtask(outputDir).values()) {
    for (const line of subtaskLines) {
      lines++;
      const [key, n, i] = line.split(' ');
      const list = perKey.get(key!) ?? [];
      list.push(`${n} ${i}`);
      perKey.set(key!, list);
    }
  }
  const problems: string[] = [];
  for (let k = 0; k < keys; k++) {
    const key = `k${k}`;
    const want: string[] = [];
    for (let i = k, n = 1; i < records; i += keys, n++) want.push(`${n} ${i}`);
    const got = perKey.get(key) ?? [];
    perKey.delete(key);
    const at = firstDifference(got, want);
    if (at !== null)
      problems.push(
        `key ${key}: ${got.length} lines, expected ${want.length}; first difference at line ${at + 1}: got '${got[at] ?? '(end)'}', expected '${want[at] ?? '(end)'}'`,
      );
  }
  for (const [key, got] of perKey) problems.push(`key ${key}: ${got.length} lines of a key the input never has`);
  if (problems.length > 0) problems.unshift(`${lines} lines committed, expected ${records}`);
  return { lines, expected: records, problems: problems.slice(0, 8) };
}

function firstDifference(got: readonly string[], want: readonly string[]): number | null {
  const n = Math.max(got.length, want.length);
  for (let i = 0; i < n; i++) if (got[i] !== want[i]) return i;
  return null;
}
