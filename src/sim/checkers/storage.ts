/**
 * Checker (d): no file referenced by a retained checkpoint was deleted while retained (recorded by
 * the storage on every delete), and after the job ended nothing is left behind (the job deletes its
 * checkpoints when it finishes, so every remaining file is an orphan).
 */
import type { FaultyStorage } from '../faulty-storage.ts';

export function checkStorage(storage: FaultyStorage): string[] {
  const problems = [...storage.violations];
  const left = storage.files();
  if (left.length > 0) problems.push(`${left.length} file(s) left after the job finished: ${left.slice(0, 5).join(', ')}`);
  return problems;
}
