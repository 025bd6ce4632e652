/**
 * Bundling a job module on the job master's side: its own files in one ESM file, packages left as
 * imports, deterministic bytes and hash, relative imports of Weir's sources made public specifiers
 * or refused, and errors that name the file and line.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleJobModule } from '../../../src/cluster/job-code/bundle.ts';
import { jobCodeHash } from '../../../src/cluster/job-code/job-code.ts';
import { JobDefinitionError } from '../../../src/core/errors.ts';

const FIXTURES = path.join(import.meta.dirname, 'fixtures');
const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
/** The code without its inline source map. */
const codeOf = (bytes: Uint8Array): string => text(bytes).split('//# sourceMappingURL=')[0]!;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'weir-job-code-bundle-'));
  for (const f of ['shipped-job.ts', 'shipped-helper.ts']) cpSync(path.join(FIXTURES, f), path.join(dir, f));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('bundleJobModule', () => {
  it('bundles the module and its helper file into one ESM file; packages and builtins stay imports', async () => {
    const code = await bundleJobModule(path.join(dir, 'shipped-job.ts'));
    expect(code.name).toBe('shipped-job.ts');
    expect(code.sourcePath).toBe(path.join(dir, 'shipped-job.ts'));
    expect(code.sizeBytes).toBe(code.bytes.length);
    expect(code.hash).toBe(jobCodeHash(code.bytes));
    const js = codeOf(code.bytes);
    expect(js).toContain('exploded in the helper');
    expect(js).not.toContain('./shipped-helper');
    for (const spec of ['weir-stream', 'commander', 'msgpackr', 'node:os', 'node:path']) expect(js).toContain(`from "${spec}"`);
  });

  it('maps the bundle to the original files by absolute file URL, inline', async () => {
    const code = await bundleJobModule(path.join(dir, 'shipped-job.ts'));
    const inline = /\/\/# sourceMappingURL=data:application\/json;base64,(\S+)\n$/.exec(text(code.bytes));
    expect(inline).not.toBeNull();
    const map = JSON.parse(Buffer.from(inline![1]!, 'base64').toString('utf8')) as { sources: string[] };
    expect(map.sources.sort()).toEqual(['shipped-helper.ts', 'shipped-job.ts'].map((f) => pathToFileURL(path.join(dir, f)).href));
  });

  it('gives the same bytes for the same files, and another hash when a helper file changes', async () => {
    const module = path.join(dir, 'shipped-job.ts');
    const [a, b] = [await bundleJobModule(module), await bundleJobModule(path.relative(process.cwd(), module))];
    expect(Buffer.compare(a.bytes, b.bytes)).toBe(0);
    expect(b.hash).toBe(a.hash);
    const helper = path.join(dir, 'shipped-helper.ts');
    const original = readFileSync(helper, 'utf8');
    writeFileSync(helper, original.replace("SUFFIX = '!'", "SUFFIX = '?'"));
    try {
      expect((await bundleJobModule(module)).hash).not.toBe(a.hash);
    } finally {
      writeFileSync(helper, original);
    }
    expect((await bundleJobModule(module)).hash).toBe(a.hash);
  });

  it("makes a relative import of Weir's src/index.ts the import 'weir-stream'", async () => {
    const code = await bundleJobModule(path.join(FIXTURES, 'imports-weir-index.ts'));
    const js = codeOf(code.bytes);
    expect(js).toContain('import { FileSink } from "weir-stream";');
    expect(js).not.toContain('src/index.ts');
    // Weir itself is not in it: a few hundred bytes of job and its map.
    expect(code.sizeBytes).toBeLessThan(4_000);
  });

  it("refuses a relative import of an internal file of Weir, naming the importing file and line and 'weir-stream'", async () => {
    const err = await bundleJobModule(path.join(FIXTURES, 'imports-weir-internal.ts')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobDefinitionError);
    const message = (err as JobDefinitionError).message;
    expect(message).toContain(`cannot bundle job module ${path.join(FIXTURES, 'imports-weir-internal.ts')}: `);
    expect(message).toContain(`${path.join(FIXTURES, 'internal-helper.ts')}:2:`);
    expect(message).toContain("imports Weir's internal file src/connectors/files/file-sink.ts");
    expect(message).toContain("import from 'weir-stream' instead");
  });

  it('names the file and line of a syntax error (in the module or a helper) and of an import that does not resolve', async () => {
    writeFileSync(path.join(dir, 'syntax.ts'), "import { label } from './shipped-helper.ts';\nconst n: number = (1 +;\nexport default () => label(n);\n");
    writeFileSync(path.join(dir, 'broken-helper.ts'), 'export const x = {;\n');
    writeFileSync(path.join(dir, 'imports-broken.ts'), "import { x } from './broken-helper.ts';\nexport default () => x;\n");
    writeFileSync(path.join(dir, 'missing.ts'), "import x from './not-there.ts';\nexport default () => x;\n");
    const failure = (f: string): Promise<JobDefinitionError> =>
      bundleJobModule(path.join(dir, f)).then(
        () => {
          throw new Error(`${f} bundled`);
        },
        (e: unknown) => e as JobDefinitionError,
      );
    const [syntax, helper, missing] = await Promise.all([failure('syntax.ts'), failure('imports-broken.ts'), failure('missing.ts')]);
    for (const e of [syntax, helper, missing]) expect(e).toBeInstanceOf(JobDefinitionError);
    expect(syntax.message).toMatch(new RegExp(`^cannot bundle job module ${dir}/syntax.ts: ${dir}/syntax.ts:2:\\d+: Unexpected ";"`));
    expect(helper.message).toContain(`${dir}/broken-helper.ts:1:`);
    expect(missing.message).toContain(`${dir}/missing.ts:1:15: Could not resolve "./not-there.ts"`);
  });

  it('refuses a missing module and a bundle over the size cap', async () => {
    await expect(bundleJobModule(path.join(dir, 'nope.ts'))).rejects.toThrow(`job module not found: ${path.join(dir, 'nope.ts')}`);
    const err = await bundleJobModule(path.join(dir, 'shipped-job.ts'), 100).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobDefinitionError);
    expect((err as Error).message).toMatch(/bundles to \d+ bytes, more than the 100 a job's code may have/);
  });
});
