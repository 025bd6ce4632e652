// The child process of test/support/s3-server.ts: runs s3rver on a loopback port with its data in
// the directory given, creates the buckets given, and prints `{"port":N}` once it listens. A child
// process because s3rver's ListObjectsV2 paging needs Node's --openssl-legacy-provider, which the
// vitest worker does not have (and should not get).
import S3rver from 's3rver';

const [dir, ...buckets] = process.argv.slice(2);
const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  silent: true,
  directory: dir,
  configureBuckets: buckets.map((name) => ({ name, configs: [] })),
});
const { port } = await server.run();
process.stdout.write(`${JSON.stringify({ port })}\n`);
process.on('SIGTERM', () => {
  server.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
