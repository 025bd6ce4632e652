/**
 * The HA store on PostgreSQL (`--ha postgres://...`): a lease row per job with an epoch, renewed
 * well before it expires, and the pointer to the newest completed checkpoint, written only under
 * the live lease of its epoch. A lease row beats advisory locks: a lock belongs to one session,
 * breaks behind transaction-pooling proxies and never tells its holder it was lost; a row with an
 * expiry and an epoch is checked by every write.
 *
 * Tables, created on first use (both keyed by the job's HA name):
 *
 *   weir_ha_leases   (job text PRIMARY KEY, holder text, epoch bigint, lease_until timestamptz, address text)
 *   weir_ha_pointers (job text PRIMARY KEY, epoch bigint, checkpoint_id bigint, location text, written_at timestamptz)
 *   weir_ha_published (job text, checkpoint_id bigint, epoch bigint, location text, written_at timestamptz,
 *                      PRIMARY KEY (job, checkpoint_id)): the last few published, to fall back on
 *   weir_ha_submissions (job text PRIMARY KEY, epoch bigint, graph jsonb, module_hash text, written_at timestamptz):
 *                      the job its leaders run (`submit`), written under the live lease as the pointer is
 *   weir_ha_standbys (job text, holder text, address text, seen_at timestamptz, seen_until timestamptz,
 *                     PRIMARY KEY (job, holder)): the standbys waiting, each renewed at its polls
 *
 * Every comparison uses the server's clock (`clock_timestamp()`). `publish` is one statement whose
 * CTE locks the lease row `FOR SHARE` and re-reads it: a takeover that committed meanwhile (a
 * new epoch) excludes the row, one in progress is waited for, so a pointer write never lands after
 * a takeover under the old epoch. When a job ends its pointer row goes and its lease row stays
 * as an ended lease (`holder` ''): epochs of the job's name never repeat, a standby that watched
 * the job run learns it ended (it does not take an ended lease), and a new run of the same name
 * takes it.
 */
import pg from 'pg';
import { errorMessage, HaError } from '../../core/errors.ts';
import {
  type AcquireResult,
  type CheckpointPointer,
  type HaStore,
  type JobSubmissionRecord,
  type LeaseHolder,
  PUBLISHED_KEPT,
  type StandbyEntry,
} from './ha-store.ts';
import type { GraphFingerprint } from '../transport/protocol.ts';
import { describeHaUrl } from './ha-url.ts';

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS weir_ha_leases (
     job text PRIMARY KEY, holder text NOT NULL, epoch bigint NOT NULL, lease_until timestamptz NOT NULL, address text)`,
  `CREATE TABLE IF NOT EXISTS weir_ha_pointers (
     job text PRIMARY KEY, epoch bigint NOT NULL, checkpoint_id bigint NOT NULL, location text NOT NULL, written_at timestamptz NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS weir_ha_published (
     job text NOT NULL, checkpoint_id bigint NOT NULL, epoch bigint NOT NULL, location text NOT NULL, written_at timestamptz NOT NULL,
     PRIMARY KEY (job, checkpoint_id))`,
  `CREATE TABLE IF NOT EXISTS weir_ha_standbys (
     job text NOT NULL, holder text NOT NULL, address text, seen_at timestamptz NOT NULL, seen_until timestamptz NOT NULL,
     PRIMARY KEY (job, holder))`,
  `CREATE TABLE IF NOT EXISTS weir_ha_submissions (
     job text PRIMARY KEY, epoch bigint NOT NULL, graph jsonb NOT NULL, module_hash text, written_at timestamptz NOT NULL)`,
];

const SUBMIT = `
  WITH lease AS (
    SELECT epoch FROM weir_ha_leases WHERE job = $1 AND epoch = $2 AND lease_until > clock_timestamp() FOR SHARE
  )
  INSERT INTO weir_ha_submissions AS s (job, epoch, graph, module_hash, written_at)
    SELECT $1, $2, $3::jsonb, $4, clock_timestamp() FROM lease
  ON CONFLICT (job) DO UPDATE SET epoch = EXCLUDED.epoch, graph = EXCLUDED.graph, module_hash = EXCLUDED.module_hash, written_at = EXCLUDED.written_at
    WHERE s.epoch <= EXCLUDED.epoch
  RETURNING epoch`;

const UNTIL = `clock_timestamp() + make_interval(secs => $3::double precision / 1000)`;

const ACQUIRE = `
  INSERT INTO weir_ha_leases AS l (job, holder, epoch, lease_until, address) VALUES ($1, $2, 1, ${UNTIL}, $4)
  ON CONFLICT (job) DO UPDATE SET holder = EXCLUDED.holder, epoch = l.epoch + 1, lease_until = EXCLUDED.lease_until, address = EXCLUDED.address
    WHERE l.lease_until <= clock_timestamp() AND (l.holder <> '' OR $5)
  RETURNING epoch`;

const RENEW = `
  UPDATE weir_ha_leases SET lease_until = ${UNTIL}
  WHERE job = $1 AND holder = $2 AND epoch = $4 AND lease_until > clock_timestamp()
  RETURNING epoch`;

// Besides the pointer, the published list: this checkpoint, and the newest PUBLISHED_KEPT - 1 of
// the ones before it (the statement's snapshot does not see its own insert, so the prune keeps
// that many of the older rows).
const PUBLISH = `
  WITH lease AS (
    SELECT epoch FROM weir_ha_leases WHERE job = $1 AND epoch = $2 AND lease_until > clock_timestamp() FOR SHARE
  ), listed AS (
    INSERT INTO weir_ha_published AS h (job, checkpoint_id, epoch, location, written_at)
      SELECT $1, $3, $2, $4, clock_timestamp() FROM lease
    ON CONFLICT (job, checkpoint_id) DO UPDATE SET epoch = EXCLUDED.epoch, location = EXCLUDED.location, written_at = EXCLUDED.written_at
      WHERE h.epoch <= EXCLUDED.epoch
  ), pruned AS (
    DELETE FROM weir_ha_published WHERE job = $1 AND checkpoint_id <> $3 AND EXISTS (SELECT 1 FROM lease) AND checkpoint_id NOT IN (
      SELECT checkpoint_id FROM weir_ha_published WHERE job = $1 AND checkpoint_id <> $3 ORDER BY checkpoint_id DESC LIMIT ${PUBLISHED_KEPT - 1})
  )
  INSERT INTO weir_ha_pointers AS p (job, epoch, checkpoint_id, location, written_at)
    SELECT $1, $2, $3, $4, clock_timestamp() FROM lease
  ON CONFLICT (job) DO UPDATE SET epoch = EXCLUDED.epoch, checkpoint_id = EXCLUDED.checkpoint_id, location = EXCLUDED.location, written_at = EXCLUDED.written_at
    WHERE p.epoch < EXCLUDED.epoch OR p.checkpoint_id < EXCLUDED.checkpoint_id
  RETURNING checkpoint_id`;

export class PostgresHaStore implements HaStore {
  readonly description: string;
  /** The open connection; null after it broke (the server restarted, a network cut): the next call opens another. */
  private client: pg.Client | null;
  private closed = false;

  private constructor(
    client: pg.Client,
    private readonly url: string,
    private readonly connectTimeoutMs: number,
  ) {
    this.client = client;
    this.description = describeHaUrl(url);
  }

  /**
   * Connects and creates the tables when missing.
   * @throws HaError (HA_UNREACHABLE) naming the URL (without its password) when the server cannot be reached.
   */
  static async open(url: string, connectTimeoutMs = 10_000): Promise<PostgresHaStore> {
    const described = describeHaUrl(url);
    const client = await connectTo(url, connectTimeoutMs);
    for (const ddl of SCHEMA) {
      try {
        await client.query(ddl);
      } catch (err) {
        // Two job masters creating the table at once: one wins, the other finds it there.
        if (!isDuplicateObject(err)) {
          await client.end().catch(() => {});
          throw new HaError('HA_UNREACHABLE', `cannot create the HA tables in ${described}: ${errorMessage(err)}`, { cause: err });
        }
      }
    }
    return new PostgresHaStore(client, url, connectTimeoutMs);
  }

  async acquire(job: string, holder: string, leaseMs: number, address: string | null, takeEnded: boolean): Promise<AcquireResult> {
    const r = await this.query<{ epoch: string }>(ACQUIRE, [job, holder, leaseMs, address, takeEnded]);
    if (r.rows.length === 1) return { held: true, epoch: Number(r.rows[0]!.epoch) };
    const leader = await this.leader(job);
    if (leader === null) return this.acquire(job, holder, leaseMs, address, takeEnded); // removed meanwhile: try again
    return { held: false, leader };
  }

  async renew(job: string, holder: string, epoch: number, leaseMs: number): Promise<boolean> {
    const r = await this.query(RENEW, [job, holder, leaseMs, epoch]);
    return r.rows.length === 1;
  }

  async publish(job: string, epoch: number, pointer: Omit<CheckpointPointer, 'epoch'>): Promise<boolean> {
    const r = await this.query(PUBLISH, [job, epoch, pointer.checkpointId, pointer.location]);
    if (r.rows.length === 1) return true;
    // Nothing written: fenced, or an older checkpoint than the pointer (subsumed: not a fence).
    const latest = await this.latest(job);
    const live = await this.query('SELECT 1 FROM weir_ha_leases WHERE job = $1 AND epoch = $2 AND lease_until > clock_timestamp()', [job, epoch]);
    return live.rows.length === 1 && latest !== null && latest.epoch === epoch && latest.checkpointId >= pointer.checkpointId;
  }

  async latest(job: string): Promise<CheckpointPointer | null> {
    const r = await this.query<{ checkpoint_id: string; location: string; epoch: string }>(
      'SELECT checkpoint_id, location, epoch FROM weir_ha_pointers WHERE job = $1',
      [job],
    );
    const row = r.rows[0];
    return row === undefined ? null : { checkpointId: Number(row.checkpoint_id), location: row.location, epoch: Number(row.epoch) };
  }

  async published(job: string): Promise<readonly CheckpointPointer[]> {
    const r = await this.query<{ checkpoint_id: string; location: string; epoch: string }>(
      `SELECT checkpoint_id, location, epoch FROM weir_ha_published WHERE job = $1 ORDER BY checkpoint_id DESC LIMIT ${PUBLISHED_KEPT}`,
      [job],
    );
    return r.rows.map((row) => ({ checkpointId: Number(row.checkpoint_id), location: row.location, epoch: Number(row.epoch) }));
  }

  async leader(job: string): Promise<(LeaseHolder & { readonly live: boolean }) | null> {
    const r = await this.query<{ holder: string; epoch: string; address: string | null; live: boolean }>(
      'SELECT holder, epoch, address, lease_until > clock_timestamp() AS live FROM weir_ha_leases WHERE job = $1',
      [job],
    );
    const row = r.rows[0];
    return row === undefined ? null : { holder: row.holder, epoch: Number(row.epoch), address: row.address, live: row.live };
  }

  async announce(job: string, holder: string, epoch: number, address: string): Promise<void> {
    await this.query('UPDATE weir_ha_leases SET address = $4 WHERE job = $1 AND holder = $2 AND epoch = $3', [job, holder, epoch, address]);
  }

  async finish(job: string, holder: string, epoch: number): Promise<void> {
    await this.query(
      `WITH ended AS (
         UPDATE weir_ha_leases SET holder = '', lease_until = '-infinity', address = NULL
         WHERE job = $1 AND holder = $2 AND epoch = $3 AND lease_until > clock_timestamp() RETURNING job
       ), listed AS (
         DELETE FROM weir_ha_published WHERE job IN (SELECT job FROM ended)
       ), submitted AS (
         DELETE FROM weir_ha_submissions WHERE job IN (SELECT job FROM ended)
       ), waiting AS (
         DELETE FROM weir_ha_standbys WHERE job IN (SELECT job FROM ended)
       )
       DELETE FROM weir_ha_pointers WHERE job IN (SELECT job FROM ended)`,
      [job, holder, epoch],
    );
  }

  async submit(job: string, epoch: number, record: Omit<JobSubmissionRecord, 'epoch'>): Promise<boolean> {
    const r = await this.query(SUBMIT, [job, epoch, JSON.stringify(record.graph), record.moduleHash]);
    return r.rows.length === 1;
  }

  async standBy(job: string, holder: string, address: string | null, leaseMs: number): Promise<void> {
    await this.query(
      `INSERT INTO weir_ha_standbys (job, holder, address, seen_at, seen_until) VALUES ($1, $2, $4, clock_timestamp(), ${UNTIL})
       ON CONFLICT (job, holder) DO UPDATE SET address = EXCLUDED.address, seen_at = EXCLUDED.seen_at, seen_until = EXCLUDED.seen_until`,
      [job, holder, leaseMs, address],
    );
  }

  async leaveStandby(job: string, holder: string): Promise<void> {
    await this.query('DELETE FROM weir_ha_standbys WHERE job = $1 AND holder = $2', [job, holder]);
  }

  async standbys(job: string): Promise<readonly StandbyEntry[]> {
    const r = await this.query<{ holder: string; address: string | null; ago: number }>(
      `SELECT holder, address, (extract(epoch FROM clock_timestamp() - seen_at) * 1000)::float8 AS ago
       FROM weir_ha_standbys WHERE job = $1 AND seen_until > clock_timestamp() ORDER BY seen_at, holder`,
      [job],
    );
    return r.rows.map((row) => ({ holder: row.holder, address: row.address, seenMsAgo: Math.max(0, Math.round(row.ago)) }));
  }

  async submission(job: string): Promise<JobSubmissionRecord | null> {
    const r = await this.query<{ epoch: string; graph: GraphFingerprint; module_hash: string | null }>(
      'SELECT epoch, graph, module_hash FROM weir_ha_submissions WHERE job = $1',
      [job],
    );
    const row = r.rows[0];
    return row === undefined ? null : { graph: row.graph, moduleHash: row.module_hash, epoch: Number(row.epoch) };
  }

  async release(job: string, holder: string, epoch: number): Promise<void> {
    await this.query(`UPDATE weir_ha_leases SET lease_until = '-infinity' WHERE job = $1 AND holder = $2 AND epoch = $3`, [job, holder, epoch]);
  }

  async close(): Promise<void> {
    this.closed = true;
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => {});
  }

  /**
   * Runs one statement. A connection that broke is dropped and the call fails (HA_UNREACHABLE); the
   * next call connects again, so a leader rides out a server restart or a short cut within its
   * lease. Every statement here may be sent again safely: renewals and pointers are conditional
   * upserts, and an acquire that went through unseen shows as this holder's own live lease.
   */
  private async query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<R>> {
    if (this.closed) throw new HaError('HA_UNREACHABLE', `the HA store ${this.description} is closed`);
    let client = this.client;
    try {
      if (client === null) {
        client = await connectTo(this.url, this.connectTimeoutMs);
        this.client = client;
      }
      return await client.query<R>(sql, params);
    } catch (err) {
      if (client !== null && this.client === client && isConnectionLost(err)) {
        this.client = null;
        void client.end().catch(() => {});
      }
      throw err instanceof HaError ? err : new HaError('HA_UNREACHABLE', `the HA store ${this.description} failed: ${errorMessage(err)}`, { cause: err });
    }
  }
}

async function connectTo(url: string, connectTimeoutMs: number): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs, application_name: 'weir ha' });
  // Errors between queries (the server went away) surface on the next query; an unheard 'error' event would end the process.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (err) {
    client.end().catch(() => {});
    throw new HaError('HA_UNREACHABLE', `cannot reach the HA store ${describeHaUrl(url)}: ${errorMessage(err)}`, { cause: err });
  }
  return client;
}

/** An error that leaves the connection unusable (not a statement's own failure, which has an SQLSTATE of class other than 08/57). */
function isConnectionLost(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code.startsWith('08') || code.startsWith('57');
  return true;
}

function isDuplicateObject(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === '42P07';
}
