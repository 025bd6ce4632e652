#!/usr/bin/env node
/**
 * `npm run test:loaded`: runs the whole `npm test` while CPU hogs keep every core busy, to prove the
 * suite does not depend on a quiet machine. One hog per core (HOGS=n to choose); the hogs end with
 * this script whatever happens: on exit, on a signal, and by themselves if this process dies.
 */
import { fork, spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';

const HOG_LIFETIME_MS = 60 * 60 * 1000;
const HOG_SLICE_MS = 50;

if (process.argv[2] === '--hog') {
  // Spin in slices so the IPC channel is served: when the parent goes, so does the hog.
  process.on('disconnect', () => process.exit(0));
  const until = Date.now() + HOG_LIFETIME_MS;
  const spin = () => {
    const end = Date.now() + HOG_SLICE_MS;
    while (Date.now() < end) {
      // burn CPU
    }
    if (Date.now() < until) setImmediate(spin);
    else process.exit(0);
  };
  spin();
} else {
  const hogCount = Number(process.env.HOGS ?? availableParallelism());
  if (!Number.isInteger(hogCount) || hogCount < 0) {
    console.error(`test:loaded: HOGS must be a whole number >= 0, got ${JSON.stringify(process.env.HOGS)}`);
    process.exit(2);
  }
  const hogs = Array.from({ length: hogCount }, () => fork(new URL(import.meta.url).pathname, ['--hog'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }));
  const killHogs = () => {
    for (const hog of hogs) if (hog.exitCode === null && hog.signalCode === null) hog.kill('SIGKILL');
  };
  process.on('exit', killHogs);
  const started = Date.now();
  console.error(`test:loaded: ${hogCount} CPU hog(s) spinning (pids ${hogs.map((h) => h.pid).join(', ')}); running npm test`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const test = spawn(npm, ['test', ...process.argv.slice(2)], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      test.kill(signal);
      killHogs();
      process.exit(130);
    });
  }
  test.on('close', (code, signal) => {
    killHogs();
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.error(`test:loaded: npm test ${signal ? `ended by ${signal}` : `exited ${code}`} after ${seconds} s under ${hogCount} CPU hog(s)`);
    process.exit(code ?? 1);
  });
}
