#!/usr/bin/env node
// The `weir` command. Job modules and Weir itself are TypeScript, run through tsx.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
const code = await main(process.argv);
// Jobs may leave timers behind; the exit code is final once main returns. Flush stdout first.
process.stdout.write('', () => process.exit(code));
