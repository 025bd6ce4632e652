import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Examples and job fixtures import the package by name, as users do; in-process tests get the sources.
    alias: [
      { find: /^weir-stream$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
      { find: /^weir-stream\/(postgres|redis|nats|nexmark)$/, replacement: fileURLToPath(new URL('./src/connectors/$1/index.ts', import.meta.url)) },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two test files at a time. Vitest's default on a 2-core machine is one (cores - 1), yet most
    // files spend their time waiting on the processes they start (weir, task managers, servers):
    // measured on this machine, the whole suite took 1,149 s with one and 818 s with two. Files
    // that share a resource keep apart by construction (fresh schemas, own ports, own namespaces).
    maxWorkers: 2,
  },
});
