/**
 * A PostgreSQL server of a test's own (initdb into a temporary directory, pg_ctl on a free port of
 * 127.0.0.1, trust authentication), for tests that stop or restart the server: the shared one at
 * 127.0.0.1:5432 serves other tests and must never be restarted. As root, the server's commands
 * run as the `postgres` user (initdb refuses root).
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BIN = process.env.WEIR_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** Whether a private server can be started here (the server's binaries are installed). */
export const privatePostgresAvailable = existsSync(path.join(BIN, 'pg_ctl'));

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Runs a server command, as `postgres` when this process is root. */
async function pg(command: string, args: readonly string[]): Promise<void> {
  const bin = path.join(BIN, command);
  if (process.getuid?.() === 0) await run('runuser', ['-u', 'postgres', '--', bin, ...args]);
  else await run(bin, [...args]);
}

/** One private server: its URL (superuser `root`, database `postgres`), stop/start/restart, and its removal. */
export class PrivatePostgres {
  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  get url(): string {
    return `postgres://root@127.0.0.1:${this.port}/postgres`;
  }

  static async start(): Promise<PrivatePostgres> {
    // Under /tmp itself: the test run's own temporary directory is closed to the postgres user.
    const dir = mkdtempSync(path.join('/tmp', 'weir-private-pg-'));
    if (process.getuid?.() === 0)
      chownSync(dir, Number((await run('id', ['-u', 'postgres'])).stdout.trim()), Number((await run('id', ['-g', 'postgres'])).stdout.trim()));
    await pg('initdb', ['-D', path.join(dir, 'data'), '-A', 'trust', '-U', 'root', '--no-sync', '-E', 'UTF8']);
    const server = new PrivatePostgres(await freePort(), dir);
    await server.startServer();
    return server;
  }

  private startServer(): Promise<void> {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_prepared_transactions=10`;
    return pg('pg_ctl', ['-D', path.join(this.dir, 'data'), '-o', options, '-l', path.join(this.dir, 'server.log'), '-w', 'start']);
  }

  /** Stops the server (fast: open sessions are ended, as a restart by an operator does). */
  stop(): Promise<void> {
    return pg('pg_ctl', ['-D', path.join(this.dir, 'data'), '-m', 'fast', '-w', 'stop']);
  }

  /** Starts it again after `stop`, on the same port. */
  startAgain(): Promise<void> {
    return this.startServer();
  }

  /** Stops it and removes its directory. */
  async remove(): Promise<void> {
    await pg('pg_ctl', ['-D', path.join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop']).catch(() => {});
    rmSync(this.dir, { recursive: true, force: true });
  }
}
