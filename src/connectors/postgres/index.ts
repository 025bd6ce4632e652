/**
 * `weir-stream/postgres`: the PostgreSQL connectors, a two-phase sink and a change-data-capture
 * source. A separate entry so that `weir-stream` itself never loads `pg` or
 * `pg-logical-replication`; install those beside Weir to use this one.
 */
export { PostgresSink } from './postgres-sink.ts';
export type { PostgresSinkOptions } from './postgres-sink.ts';
export type { PostgresConnectionOptions } from './settings.ts';
export { PostgresCdcSource } from './cdc/cdc-source.ts';
export type { PostgresCdcSourceOptions } from './cdc/cdc-settings.ts';
export type { ChangeRecord, ChangeRow, DeleteChange, InsertChange, UpdateChange } from './cdc/change-record.ts';
