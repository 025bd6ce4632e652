/**
 * Loads a job module: a .ts/.js file whose default export builds the job on a StreamEnvironment,
 * and which may export `options` (StreamEnvironmentOptions), `name`, `onFinished` (called by
 * `weir run` after the job FINISHED, to report or verify its result), and for `weir sim` either
 * `simCheck` (its own output check) or `simOutput = 'order-independent'`.
 */
import { stat } from 'node:fs/promises';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { StreamEnvironment } from './environment.ts';
import type { StreamEnvironmentOptions } from './options.ts';
import type { JobFinishedContext, OnFinished, SimCheck } from './job-module.ts';
import { importingJobModule, runsAtImportMessage } from './job-module-import.ts';
import { errorMessage, JobDefinitionError, oneLine } from '../core/errors.ts';

export type { JobFinishedContext, OnFinished };

/** A job module as loaded and checked (the public shape of its exports is `JobModule` in src/api/job-module.ts). */
export interface LoadedJobModule {
  readonly path: string;
  readonly name: string;
  readonly options: StreamEnvironmentOptions;
  readonly build: (env: StreamEnvironment) => void | Promise<void>;
  readonly onFinished?: OnFinished;
  /** `weir sim`: the module's own check of committed output against the fault-free run. */
  readonly simCheck?: SimCheck;
  /** `weir sim`: the output does not depend on how inputs interleave, so it compares as a multiset. */
  readonly simOutput?: 'order-independent';
}

const TS_MODULE_RE = /\.[cm]?ts$/;
let typeScriptRegistered: Promise<void> | null = null;

/**
 * Lets `import()` load TypeScript, once per process and only when a job module needs it (Weir
 * itself is compiled). Both of tsx's loaders: in a package without `"type": "module"` a `.ts` file
 * is CommonJS, and with the ESM loader alone Node reports every such module, even a correct one, as
 * "Cannot require() ES Module ... in a cycle" instead of loading it or naming its real error.
 */
function registerTypeScript(): Promise<void> {
  return (typeScriptRegistered ??= (async () => {
    const [cjs, esm] = await Promise.all([import('tsx/cjs/api'), import('tsx/esm/api')]);
    cjs.register();
    esm.register();
  })());
}

/** The exports of a job module; one compiled to CommonJS arrives wrapped as `{ default: module.exports }`. */
function exportsOf(loaded: Record<string, unknown>): Record<string, unknown> {
  const inner = loaded.default;
  const wrapped = typeof inner === 'object' && inner !== null && (inner as Record<string, unknown>).__esModule === true;
  return wrapped ? (inner as Record<string, unknown>) : loaded;
}

export async function loadJobModule(file: string, cwd = process.cwd()): Promise<LoadedJobModule> {
  const abs = path.resolve(cwd, file);
  const info = await stat(abs).catch(() => null);
  if (info === null) throw new JobDefinitionError(`job module not found: ${abs}`);
  if (!info.isFile()) throw new JobDefinitionError(`job module is not a file: ${abs}`);
  const imported = await importingJobModule(abs, async () => {
    if (TS_MODULE_RE.test(abs)) await registerTypeScript();
    return (await import(pathToFileURL(abs).href)) as Record<string, unknown>;
  });
  // Also when the script did not await execute() or caught its error: none of its job ran.
  if (imported.executedAtImport) throw new JobDefinitionError(runsAtImportMessage(abs), imported.ok ? undefined : { cause: imported.error });
  if (!imported.ok) throw new JobDefinitionError(`cannot load job module ${abs}: ${oneLine(errorMessage(imported.error))}`, { cause: imported.error });
  const mod = exportsOf(imported.value);
  const build = mod.default;
  if (typeof build !== 'function') {
    throw new JobDefinitionError(`job module ${abs} has no default export function: expected \`export default (env: StreamEnvironment) => { ... }\``);
  }
  const options = mod.options ?? {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new JobDefinitionError(`job module ${abs}: export 'options' must be a StreamEnvironmentOptions object`);
  }
  const name = mod.name ?? path.basename(abs).replace(/\.[cm]?[jt]s$/, '');
  if (typeof name !== 'string' || name.length === 0) throw new JobDefinitionError(`job module ${abs}: export 'name' must be a non-empty string`);
  const onFinished = mod.onFinished;
  if (onFinished !== undefined && typeof onFinished !== 'function') throw new JobDefinitionError(`job module ${abs}: export 'onFinished' must be a function`);
  const simCheck = mod.simCheck;
  if (simCheck !== undefined && typeof simCheck !== 'function')
    throw new JobDefinitionError(`job module ${abs}: export 'simCheck' must be a function (committed, oracle, guarantee) => string[]`);
  const simOutput = mod.simOutput;
  if (simOutput !== undefined && simOutput !== 'order-independent')
    throw new JobDefinitionError(`job module ${abs}: export 'simOutput' must be 'order-independent', got ${JSON.stringify(simOutput)}`);
  if (simCheck !== undefined && simOutput !== undefined) throw new JobDefinitionError(`job module ${abs}: export either 'simCheck' or 'simOutput', not both`);
  return {
    path: abs,
    name,
    options: options as StreamEnvironmentOptions,
    build: build as LoadedJobModule['build'],
    ...(onFinished !== undefined ? { onFinished: onFinished as OnFinished } : {}),
    ...(simCheck !== undefined ? { simCheck: simCheck as SimCheck } : {}),
    ...(simOutput !== undefined ? { simOutput } : {}),
  };
}
