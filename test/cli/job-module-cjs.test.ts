import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lines, runCli } from './run-cli.ts';

/**
 * A .ts job in a package without `"type": "module"` is CommonJS to Node. Before, every such job, the
 * correct ones too, failed with "Cannot require() ES Module ... in a cycle".
 */
describe('a .ts job module outside a "type": "module" package', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'weir-cjs-job-'));
    writeFileSync(path.join(dir, 'package.json'), '{ "name": "plain-project", "private": true }\n');
    const job = (body: string) =>
      `import * as path from 'node:path';\n${body}\nexport default (env: any) => { env.fromElements(path.basename('/a/ok')).print(); };\n`;
    writeFileSync(path.join(dir, 'good.ts'), `${job('')}export const name = 'good-cjs';\n`);
    writeFileSync(path.join(dir, 'missing-import.ts'), job("import { helper } from './helpers.ts';\nhelper();"));
    writeFileSync(path.join(dir, 'syntax.ts'), job('const x: number = (1 +;'));
    writeFileSync(path.join(dir, 'throws.ts'), job("throw new Error('no config file /etc/job.conf');"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs when it is correct', async () => {
    const r = await runCli(['run', 'good.ts', '--quiet'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('ok');
    expect(lines(r.stderr).at(-1)).toMatch(/^FINISHED \| job good-cjs-/);
  });

  it('reports its real error: a missing import, a syntax error, an exception at load', async () => {
    const run = (f: string) => runCli(['run', f], { cwd: dir });
    const [missing, syntax, throws] = await Promise.all([run('missing-import.ts'), run('syntax.ts'), run('throws.ts')]);
    for (const r of [missing, syntax, throws]) {
      expect(r.code, r.stderr).toBe(2);
      expect(lines(r.stderr), r.stderr).toHaveLength(1);
      expect(r.stderr).not.toContain('in a cycle');
    }
    expect(missing.stderr).toContain(`weir: cannot load job module ${path.join(dir, 'missing-import.ts')}: Cannot find module './helpers.ts'`);
    expect(syntax.stderr).toContain(`${path.join(dir, 'syntax.ts')}:2:`);
    expect(syntax.stderr).toContain('Unexpected');
    expect(throws.stderr).toContain('no config file /etc/job.conf');
  });
});
