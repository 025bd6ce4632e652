/**
 * A wrong or missing Redis password names its cause (WRONGPASS, NOAUTH), as the
 * PostgreSQL and NATS connectors name theirs, instead of "cannot connect … Connection is closed".
 * Runs its own redis-server with --requirepass on a free loopback port, removed afterwards.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis } from '../../../src/connectors/redis/connection.ts';
import { resolveRedisConnection } from '../../../src/connectors/redis/settings.ts';
import { ConnectorError } from '../../../src/core/errors.ts';
import { PrivateServer } from '../../support/servers.ts';

const SECRET = 'auth-test-9b1e';
let server: PrivateServer;

beforeAll(async () => {
  server = await PrivateServer.redis(['--requirepass', SECRET]);
});

afterAll(async () => {
  await server?.kill();
  if (server !== undefined) rmSync(server.dir, { recursive: true, force: true });
});

async function connectError(password: string | undefined): Promise<ConnectorError> {
  const c = resolveRedisConnection({ host: '127.0.0.1', port: server.port, connectTimeoutMs: 5000, ...(password === undefined ? {} : { password }) }, {});
  const err = await connectRedis(c, 'auth test', () => {}).then(
    (client) => {
      client.disconnect();
      return new Error('connected');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectorError);
  return err as ConnectorError;
}

describe('Redis connection errors name their cause', () => {
  it('a wrong password says WRONGPASS, naming the server, never the password', async () => {
    const err = await connectError('not-the-password');
    expect(err.code).toBe('CONNECTOR_UNREACHABLE');
    expect(err.message).toContain(`Redis at 127.0.0.1:${server.port} (db 0): cannot connect (auth test): WRONGPASS`);
    expect(err.message).not.toContain('Connection is closed');
    expect(err.message).not.toContain('not-the-password');
  });

  it('no password for a server that requires one says NOAUTH', async () => {
    const err = await connectError(undefined);
    expect(err.message).toContain('cannot connect (auth test): NOAUTH');
  });

  it('the right password connects', async () => {
    const c = resolveRedisConnection({ host: '127.0.0.1', port: server.port, password: SECRET }, {});
    const client = await connectRedis(c, 'auth test', () => {});
    expect(await client.ping()).toBe('PONG');
    client.disconnect();
  });
});
