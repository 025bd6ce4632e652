#!/usr/bin/env node
// The `weir` command: runs the compiled CLI in dist/ (built by `npm run build`, which `npm ci` runs).
let main;
try {
  ({ main } = await import('../dist/src/cli/main.js'));
} catch (err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes('dist/src/cli/main.js')) throw err;
  process.stderr.write(
    `weir: the compiled CLI is missing (${new URL('../dist/src/cli/main.js', import.meta.url).pathname}): run 'npm run build' in the weir package\n`,
  );
  process.exit(2);
}
const code = await main(process.argv);
// Jobs may leave timers behind; the exit code is final once main returns. Flush stdout first.
process.stdout.write('', () => process.exit(code));
