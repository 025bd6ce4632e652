/**
 * `import 'weir-stream'` must load none of the connector drivers nor the native lmdb: a user of the
 * FileSink should not pay for (or need to install) them. A child process imports the compiled
 * package and reports every module it resolved, through an ESM resolve hook (ES modules) and
 * `require.cache` (CommonJS, including lmdb's synchronous load); importing a connector entry is the
 * control that shows the probe sees a driver when one is loaded.
 */
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const REPO = path.resolve(import.meta.dirname, '../..');
const DRIVERS = ['pg', 'pg-logical-replication', 'ioredis', '@nats-io/transport-node', '@nats-io/jetstream', '@nats-io/nats-core', 'lmdb'];

const HOOKS = `
const seen = [];
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  seen.push(r.url);
  return r;
}
export function initialize(port) { port.on('message', () => port.postMessage(seen)); port.unref(); }
`;

/** Imports `entry` (relative to dist/src) in a fresh Node process; returns the node_modules packages it loaded. */
async function packagesLoadedBy(entry: string): Promise<string[]> {
  const script = `
import { register, createRequire } from 'node:module';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
const { port1, port2 } = new MessageChannel();
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOKS)}), { data: port2, transferList: [port2] });
await import(${JSON.stringify(path.join(REPO, 'dist/src', entry))});
port1.postMessage('report');
const esm = await new Promise((resolve) => port1.once('message', resolve));
port1.close();
const cjs = Object.keys(createRequire(import.meta.url).cache);
process.stdout.write(JSON.stringify([...esm, ...cjs]));
`;
  const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO });
  const loaded = new Set<string>();
  for (const p of JSON.parse(stdout) as string[]) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(decodeURIComponent(p));
    if (m !== null) loaded.add(m[1]!);
  }
  return [...loaded].sort();
}

describe('the core entry loads no driver', () => {
  it('import "weir-stream" resolves none of pg, pg-logical-replication, ioredis, @nats-io/*, lmdb', async () => {
    const loaded = await packagesLoadedBy('index.js');
    expect(loaded.filter((p) => DRIVERS.includes(p))).toEqual([]);
  });

  it('the connector entries load their drivers (the probe sees them)', async () => {
    expect(await packagesLoadedBy('connectors/postgres/index.js')).toEqual(expect.arrayContaining(['pg', 'pg-logical-replication']));
    expect(await packagesLoadedBy('connectors/redis/index.js')).toContain('ioredis');
    expect(await packagesLoadedBy('connectors/nats/index.js')).toEqual(expect.arrayContaining(['@nats-io/transport-node', '@nats-io/jetstream']));
  });
});
