/**
 * The guard that tells a job module from a script: while `weir run` or `weir sim` imports a job
 * module, `execute()` refuses to run, so a file that runs its job at import (a script such as
 * examples/word-count.ts) is named before any of its job runs, instead of running it and then
 * failing for want of a default export.
 */
import { JobDefinitionError } from '../core/errors.ts';

/** On globalThis under a registered symbol: a job module may resolve its own copy of Weir (another install). */
const KEY = Symbol.for('weir-stream.importingJobModule');

interface ImportState {
  readonly path: string;
  /** Set when the module called execute() while being imported. */
  executed: boolean;
}

type Holder = { [KEY]?: ImportState | undefined };

function holder(): Holder {
  return globalThis as Holder;
}

/** How importing a job module went: its exports or what it threw, and whether it called `execute()`. */
export type JobModuleImport<T> =
  | { readonly ok: true; readonly value: T; readonly executedAtImport: boolean }
  | { readonly ok: false; readonly error: unknown; readonly executedAtImport: boolean };

/**
 * Runs `load` (the import of the module at `path`) with `execute()` refused meanwhile; never
 * throws. `executedAtImport` says whether the module called `execute()` (awaited or not, caught or not).
 */
export async function importingJobModule<T>(path: string, load: () => Promise<T>): Promise<JobModuleImport<T>> {
  const state: ImportState = { path, executed: false };
  const h = holder();
  const outer = h[KEY];
  h[KEY] = state;
  try {
    const value = await load();
    return { ok: true, value, executedAtImport: state.executed };
  } catch (error) {
    return { ok: false, error, executedAtImport: state.executed };
  } finally {
    h[KEY] = outer;
  }
}

/** The message for a module that runs its job at import. */
export function runsAtImportMessage(path: string): string {
  return (
    `${path} runs a job when imported (it calls env.execute() at the top level): it is a script, not a job module. ` +
    'A job module must export a builder instead, `export default (env: StreamEnvironment) => { ... }`, and leave running it to weir; ' +
    `or run the script itself with \`npx tsx ${path}\``
  );
}

/**
 * Called by `execute()`: throws when a job module is being imported.
 * @throws JobDefinitionError naming the module.
 */
export function refuseExecuteDuringImport(): void {
  const state = holder()[KEY];
  if (state === undefined) return;
  state.executed = true;
  throw new JobDefinitionError(runsAtImportMessage(state.path));
}
