/**
 * Loads a job module: a .ts/.js file whose default export builds the job on a StreamEnvironment,
 * and which may export `options` (StreamEnvironmentOptions) and `name`.
 */
import { stat } from 'node:fs/promises';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { StreamEnvironment, StreamEnvironmentOptions } from '../index.ts';
import { errorMessage } from '../core/errors.ts';
import { oneLine } from './format.ts';
import { UsageError } from './exit.ts';

export interface JobModule {
  readonly path: string;
  readonly name: string;
  readonly options: StreamEnvironmentOptions;
  readonly build: (env: StreamEnvironment) => void | Promise<void>;
}

export async function loadJobModule(file: string, cwd = process.cwd()): Promise<JobModule> {
  const abs = path.resolve(cwd, file);
  const info = await stat(abs).catch(() => null);
  if (info === null) throw new UsageError(`job module not found: ${abs}`);
  if (!info.isFile()) throw new UsageError(`job module is not a file: ${abs}`);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(abs).href)) as Record<string, unknown>;
  } catch (err) {
    throw new UsageError(`cannot load job module ${abs}: ${oneLine(errorMessage(err))}`, { cause: err });
  }
  const build = mod.default;
  if (typeof build !== 'function') {
    throw new UsageError(`job module ${abs} has no default export function: expected \`export default (env: StreamEnvironment) => { ... }\``);
  }
  const options = mod.options ?? {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new UsageError(`job module ${abs}: export 'options' must be a StreamEnvironmentOptions object`);
  }
  const name = mod.name ?? path.basename(abs).replace(/\.[cm]?[jt]s$/, '');
  if (typeof name !== 'string' || name.length === 0) throw new UsageError(`job module ${abs}: export 'name' must be a non-empty string`);
  return { path: abs, name, options: options as StreamEnvironmentOptions, build: build as JobModule['build'] };
}
