/**
 * The job master's side of shipping job code: bundles a job module and the files it imports into
 * one ESM file with esbuild. Your own files are shipped; packages are not: every bare import
 * (`weir-stream`, `weir-stream/postgres`, `pg`, ...) and every node builtin stays an import that
 * the task manager resolves from its own installation, so those packages must be installed on
 * every host, as weir-stream itself is (code-cache.ts and resolve-hook.ts, the task manager's
 * side). A relative import of Weir's own sources becomes the public specifier of the file
 * (job-imports-plugin.ts).
 *
 * The output is deterministic: the same files at the same paths give the same bytes, whatever the
 * process's working directory, so two hosts that bundle the same module agree on its hash. Its
 * source map is inline and names the original files by absolute file URL, so a stack trace in a
 * task manager names the user's file and line.
 */
import { stat } from 'node:fs/promises';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type BuildFailure, type Message, type OutputFile } from 'esbuild';
import { JOB_CODE_BYTES_MAX, jobCodeHash, type JobCode } from './job-code.ts';
import { jobImportsPlugin } from './job-imports-plugin.ts';
import { weirPackage } from './weir-package.ts';
import { assert } from '../../core/assert.ts';
import { JobDefinitionError } from '../../core/errors.ts';

/** The name esbuild is told it writes (nothing is written): source paths in the map are relative to its directory. */
const OUT_NAME = 'job-code.mjs';

/** Bundles the job module at `modulePath` (resolved against the working directory). */
export async function bundleJobModule(modulePath: string, bytesMax = JOB_CODE_BYTES_MAX): Promise<JobCode> {
  const abs = path.resolve(modulePath);
  const info = await stat(abs).catch(() => null);
  if (info === null) throw new JobDefinitionError(`job module not found: ${abs}`);
  if (!info.isFile()) throw new JobDefinitionError(`job module is not a file: ${abs}`);
  const dir = path.dirname(abs);
  const outfile = path.join(dir, OUT_NAME);
  let outputs: OutputFile[];
  try {
    const result = await build({
      entryPoints: [abs],
      // The module's directory, not the process's: esbuild's comments name files relative to it.
      absWorkingDir: dir,
      outfile,
      write: false,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      minify: false,
      sourcemap: 'external',
      sourcesContent: false,
      logLevel: 'silent',
      plugins: [jobImportsPlugin(weirPackage())],
    });
    outputs = result.outputFiles;
  } catch (err) {
    throw bundleError(abs, dir, err);
  }
  const bytes = new TextEncoder().encode(withInlineSourceMap(outputs, outfile));
  if (bytes.length > bytesMax) {
    throw new JobDefinitionError(
      `job module ${abs} bundles to ${bytes.length} bytes, more than the ${bytesMax} a job's code may have: ` +
        'does it import data files? read them at run time from a path every host has instead',
    );
  }
  return { name: path.basename(abs), hash: jobCodeHash(bytes), bytes, sizeBytes: bytes.length, sourcePath: abs };
}

/** The code with its map appended as a data URL, the map's sources made absolute file URLs (valid on any host's cache dir). */
function withInlineSourceMap(outputs: readonly OutputFile[], outfile: string): string {
  const code = outputs.find((f) => f.path === outfile);
  const map = outputs.find((f) => f.path === `${outfile}.map`);
  assert(code !== undefined && map !== undefined, () => `esbuild gave ${outputs.map((f) => f.path).join(', ')}, not ${outfile} and its map`);
  const parsed = JSON.parse(map.text) as { sources: string[] };
  parsed.sources = parsed.sources.map((s) => pathToFileURL(path.resolve(path.dirname(outfile), s)).href);
  const inline = Buffer.from(JSON.stringify(parsed)).toString('base64');
  const body = code.text.replace(/\/\/# sourceMappingURL=\S+\s*$/, '');
  return `${body}//# sourceMappingURL=data:application/json;base64,${inline}\n`;
}

function bundleError(abs: string, dir: string, err: unknown): Error {
  const first = err instanceof Error && 'errors' in err ? (err as BuildFailure).errors[0] : undefined;
  if (first === undefined) return new JobDefinitionError(`cannot bundle job module ${abs}: ${String(err)}`, { cause: err });
  return new JobDefinitionError(`cannot bundle job module ${abs}: ${describe(first, dir)}`, { cause: err });
}

/** `file:line:column: text`, the file absolute. */
function describe(message: Message, dir: string): string {
  const at = message.location;
  if (at === null) return message.text;
  return `${path.resolve(dir, at.file)}:${at.line}:${at.column + 1}: ${message.text}`;
}
