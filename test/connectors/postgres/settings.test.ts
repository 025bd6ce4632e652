/** Connection settings: options first, then PG* variables, then defaults; the password never shows. */
import { describe, expect, it } from 'vitest';
import { connectorError, describeServer, resolveConnection } from '../../../src/connectors/postgres/settings.ts';

describe('PostgreSQL connection settings', () => {
  it('take options before the PG* environment variables, and those before the defaults', () => {
    const env = { PGHOST: 'db.example', PGPORT: '6543', PGDATABASE: 'envdb', PGUSER: 'envuser', PGPASSWORD: 'envpw' };
    expect(resolveConnection({}, env)).toMatchObject({ host: 'db.example', port: 6543, database: 'envdb', user: 'envuser', password: 'envpw' });
    expect(resolveConnection({ host: 'h', port: 1, database: 'd', user: 'u', password: 'p' }, env)).toMatchObject({
      host: 'h',
      port: 1,
      database: 'd',
      user: 'u',
      password: 'p',
    });
    expect(resolveConnection({}, { PGUSER: 'only' })).toMatchObject({ host: 'localhost', port: 5432, database: 'only', user: 'only', password: undefined });
    expect(() => resolveConnection({}, { PGPORT: 'abc' })).toThrow(/port abc is not a port number/);
  });

  it('name server, address, database and user in messages, and redact the password even when a server echoes it', () => {
    const c = resolveConnection({ host: '10.0.0.5', port: 5433, database: 'shop', user: 'app', password: 'hunter2-secret' }, {});
    expect(describeServer(c)).toBe('PostgreSQL at 10.0.0.5:5433 (database shop, user app)');
    const err = connectorError(
      c,
      'cannot connect',
      Object.assign(new Error('bad password hunter2-secret for app'), { code: '28P01' }),
      'CONNECTOR_UNREACHABLE',
    );
    expect(err.message).toBe('PostgreSQL at 10.0.0.5:5433 (database shop, user app): cannot connect: bad password *** for app [28P01]');
    expect(err.cause).toBeUndefined();
    expect(err.code).toBe('CONNECTOR_UNREACHABLE');
  });
});
