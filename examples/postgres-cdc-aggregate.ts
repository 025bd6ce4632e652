/**
 * Change data capture into an aggregate, exactly-once: every change of a PostgreSQL table of
 * orders (the rows already there, then each insert, update and delete) keeps a table of totals
 * per customer up to date.
 *
 *   orders (id, customer, amount)  --PostgresCdcSource-->  per customer: sum(amount), count(*)
 *     --PostgresSink (upsert by customer, two-phase commit)-->  customer_totals (customer, total, orders)
 *
 * The source reads a logical replication slot (pgoutput) and checkpoints its position; the sink
 * prepares each checkpoint's rows as a transaction and commits it when the checkpoint completes.
 * After any crash, `weir run ... --from <job dir>` resumes: no change is lost or counted twice, so
 * `customer_totals` always equals `SELECT customer, sum(amount), count(*) FROM orders GROUP BY
 * customer` as of the last committed checkpoint (a customer whose orders are all deleted loses
 * its row, as the GROUP BY has none). README "Change data capture from PostgreSQL" shows the
 * setup (wal_level=logical, max_prepared_transactions, the two tables).
 *
 * Run it:   PGHOST=127.0.0.1 PGUSER=postgres PGDATABASE=test \
 *             npx weir run examples/postgres-cdc-aggregate.ts --checkpoint-dir /tmp/weir-cdc
 * Settings: the PG* environment variables (PGPASSWORD too: never logged or checkpointed);
 *           CDC_ORDERS (default public.orders), CDC_TOTALS_SCHEMA (default public);
 *           CDC_SLOT_ID (default orders_totals): the replication slot and publication are named
 *           weir_cdc_<CDC_SLOT_ID>, and slot names are per server, not per database, so two users
 *           running the example on one server each need their own.
 * Clean up: the slot keeps WAL on the server until dropped:
 *           npx weir cdc drop-slot weir_cdc_orders_totals   (weir run warns of it when the job ends)
 */
import { type Collector, type StreamEnvironment, type StreamEnvironmentOptions, ValueStateDescriptor, type ValueState } from 'weir-stream';
import { type ChangeRecord, type ChangeRow, PostgresCdcSource, PostgresSink } from 'weir-stream/postgres';

export const name = 'postgres-cdc-aggregate';

export const options: StreamEnvironmentOptions = {
  parallelism: 2,
  checkpointing: { intervalMs: 1000 },
  restartStrategy: { type: 'fixed-delay', attempts: 5, delayMs: 1000 },
};

/** What one change does to a customer's total. */
export interface OrderDelta {
  readonly customer: string;
  readonly amount: number;
  readonly orders: number;
}

/** A row of `customer_totals`. */
export interface CustomerTotal {
  readonly customer: string;
  readonly total: number;
  readonly orders: number;
}

function delta(row: ChangeRow, sign: 1 | -1): OrderDelta {
  return { customer: String(row.customer), amount: sign * Number(row.amount), orders: sign };
}

/**
 * A change as deltas: an insert adds its row, a delete takes its old row away, an update does both
 * (so an order moving to another customer moves its amount). Old rows need REPLICA IDENTITY FULL.
 */
export function deltasOf(change: ChangeRecord, out: Collector<OrderDelta>): void {
  if (change.before !== null) out.collect(delta(change.before, -1));
  if (change.after !== null) out.collect(delta(change.after, 1));
}

export default function postgresCdcAggregate(env: StreamEnvironment): void {
  const orders = process.env.CDC_ORDERS ?? 'public.orders';
  const totalsSchema = process.env.CDC_TOTALS_SCHEMA ?? 'public';
  const slotId = process.env.CDC_SLOT_ID ?? 'orders_totals';
  env
    // one replication slot is one ordered stream: the source runs at parallelism 1
    .fromSource(new PostgresCdcSource({ tables: [orders], id: slotId }))
    .uid('order-changes')
    .setParallelism(1)
    .flatMap<OrderDelta>(deltasOf)
    .uid('order-deltas')
    .keyBy((d) => d.customer)
    .process(() => {
      let total: ValueState<number>;
      let count: ValueState<number>;
      return {
        open(ctx) {
          total = ctx.getState(new ValueStateDescriptor<number>('total', 0));
          count = ctx.getState(new ValueStateDescriptor<number>('orders', 0));
        },
        processElement(d: OrderDelta, _ctx, out: Collector<CustomerTotal>) {
          total.update(total.value()! + d.amount);
          count.update(count.value()! + d.orders);
          out.collect({ customer: d.customer, total: total.value()!, orders: count.value()! });
        },
      };
    })
    .uid('customer-totals')
    .sinkTo(
      new PostgresSink<CustomerTotal>({
        schema: totalsSchema,
        table: 'customer_totals',
        columns: ['customer', 'total', 'orders'],
        upsertKey: ['customer'],
        // a customer without orders has no row in the GROUP BY either
        deleteWhen: (t) => t.orders === 0,
      }),
    )
    .uid('totals-sink');
}
