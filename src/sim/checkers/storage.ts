/**
 * Checker (d): no file referenced by a retained checkpoint was deleted while retained (recorded by
 * each process's storage on every delete), and after the job ended nothing is left behind but
 * savepoints and checkpoints corrupted at rest (the job deletes its checkpoints when it finishes,
 * so every other remaining file is an orphan).
 */
export function checkStorage(violations: readonly string[], files: Iterable<string>, kept: (file: string) => boolean): string[] {
  const problems = [...violations];
  const left = [...files].filter((f) => !kept(f));
  if (left.length > 0) problems.push(`${left.length} file(s) left after the job finished: ${left.slice(0, 5).join(', ')}`);
  return problems;
}
