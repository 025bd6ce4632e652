import { describe, expect, it } from 'vitest';
import { describeRedis, redisError, resolveRedisConnection } from '../../../src/connectors/redis/settings.ts';

describe('Redis connection settings', () => {
  it('options win over the URL, the URL over the environment, the environment over defaults', () => {
    expect(resolveRedisConnection({}, {})).toEqual({
      host: '127.0.0.1',
      port: 6379,
      username: undefined,
      password: undefined,
      db: 0,
      connectTimeoutMs: 10_000,
    });
    const env = { REDIS_URL: 'redis://app:p%40ss@cache:6380/2', REDIS_HOST: 'ignored', REDIS_PASSWORD: 'ignored' };
    expect(resolveRedisConnection({}, env)).toMatchObject({ host: 'cache', port: 6380, username: 'app', password: 'p@ss', db: 2 });
    expect(resolveRedisConnection({ port: 7000, password: 'x' }, env)).toMatchObject({ host: 'cache', port: 7000, password: 'x' });
    expect(resolveRedisConnection({}, { REDIS_HOST: 'h', REDIS_PORT: '1234', REDIS_PASSWORD: 'pw' })).toMatchObject({ host: 'h', port: 1234, password: 'pw' });
  });

  it('a bad URL is named without its password', () => {
    expect(() => resolveRedisConnection({ url: 'redis://u:topsecret@[bad' })).toThrow(/redis:\/\/\*\*\*@\[bad/);
    expect(() => resolveRedisConnection({ url: 'redis://u:topsecret@[bad' })).not.toThrow(/topsecret/);
  });

  it('errors name server and address and never the password', () => {
    const c = resolveRedisConnection({ host: '10.1.2.3', port: 6390, username: 'app', password: 'hunter2-secret' }, {});
    expect(describeRedis(c)).toBe('Redis at 10.1.2.3:6390 (db 0, user app)');
    const err = redisError(c, 'cannot connect', new Error('WRONGPASS hunter2-secret rejected'), 'CONNECTOR_UNREACHABLE');
    expect(err.message).toBe('Redis at 10.1.2.3:6390 (db 0, user app): cannot connect: WRONGPASS *** rejected');
    expect(err.code).toBe('CONNECTOR_UNREACHABLE');
    expect(err.cause).toBeUndefined();
  });
});
