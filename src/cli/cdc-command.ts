/**
 * `weir cdc drop-slot <name...>`: drops the replication slot and publication a PostgreSQL CDC source
 * left on the server (they hold WAL until dropped). Connects like the source does: the PG*
 * environment variables, overridden by flags. A slot a running job streams is left alone.
 */
import { connect } from '../connectors/postgres/connection.ts';
import { dropCdcSlot } from '../connectors/postgres/cdc/slot-admin.ts';
import { describeServer, resolveConnection } from '../connectors/postgres/settings.ts';
import { EXIT_JOB_FAILED, EXIT_OK, UsageError } from './exit.ts';

export interface DropSlotFlags {
  readonly host?: string;
  readonly port?: number;
  readonly database?: string;
  readonly user?: string;
}

const SLOT_NAME = /^[a-z0-9_]{1,63}$/;

export async function dropSlotCommand(names: readonly string[], flags: DropSlotFlags): Promise<number> {
  for (const name of names) {
    if (!SLOT_NAME.test(name)) throw new UsageError(`cdc drop-slot: '${name}' is not a replication slot name (lower-case letters, digits and _, at most 63)`);
  }
  let c: ReturnType<typeof resolveConnection>;
  try {
    c = resolveConnection(flags);
  } catch (err) {
    throw new UsageError(`cdc drop-slot: ${(err as Error).message}`);
  }
  let lost: Error | null = null;
  const client = await connect(c, 'cdc drop-slot', (err) => {
    lost = err;
  });
  let code = EXIT_OK;
  try {
    for (const name of names) {
      const dropped = await dropCdcSlot(client, name);
      if (lost !== null) throw lost;
      if (dropped === null) {
        process.stderr.write(`weir: replication slot ${name} is in use (a running job streams it): stop that job first; nothing dropped\n`);
        code = EXIT_JOB_FAILED;
      } else if (!dropped.slot && !dropped.publication) {
        process.stderr.write(`weir: no replication slot or publication ${name} on ${describeServer(c)}\n`);
      } else {
        const what = [dropped.slot ? `replication slot ${name}` : null, dropped.publication ? `publication ${name}` : null].filter((w) => w !== null);
        process.stdout.write(`dropped ${what.join(' and ')} on ${describeServer(c)}\n`);
      }
    }
  } finally {
    await client.end().catch(() => {});
  }
  return code;
}
