/**
 * Weir's public API: everything a job, a connector or an embedding application uses. Everything
 * else is internal and may change in any release.
 * @packageDocumentation
 */
export { StreamEnvironment } from './api/environment.ts';
export type { CompletedCheckpointInfo, GeneratorOptions, JobClient, RunOptions } from './api/environment.ts';
export type {
  CheckpointingOptions,
  EmbeddedStateOptions,
  ResolvedEmbeddedState,
  ResolvedOptions,
  RestartStrategyOptions,
  StreamEnvironmentOptions,
} from './api/options.ts';
export type { CheckpointingConfig } from './checkpoint/coordinator/config.ts';
export type { RestartStrategyConfig } from './cluster/restart-strategy.ts';
export { DataStream, DataStreamSink, KeyedStream, ConnectedStreams } from './api/data-stream.ts';
export type {
  Collector,
  CoProcessFunction,
  KeyedCoProcessFunction,
  KeyedProcessFunction,
  ProcessContext,
  ProcessFunction,
  RichFunction,
  RuntimeContext,
} from './runtime/functions.ts';
export type { Source, SourceReader } from './runtime/source.ts';
export type { SourceSplit, SplitAssignment, SplitBatch, SplitReader, SplitSource } from './runtime/split-source.ts';
export { SplitSourceReader } from './runtime/split-source-reader.ts';
export { splitOwner } from './runtime/split-assignment.ts';
export type { Sink, SinkWriter, TwoPhaseCommitSink, TwoPhaseCommitWriter } from './runtime/sink.ts';
export { POLL_END, POLL_MORE } from './runtime/operator.ts';
export type { PollStatus } from './runtime/operator.ts';
export {
  AggregatingStateDescriptor,
  ListStateDescriptor,
  MapStateDescriptor,
  ReducingStateDescriptor,
  ValueStateDescriptor,
} from './state/descriptors.ts';
export type { AggregateFunction } from './state/descriptors.ts';
export type { AggregatingState, ListState, MapState, ReducingState, ValueState } from './state/state.ts';
export type { Key } from './state/key-groups.ts';
export { CollectSink } from './connectors/collect/collect-sink.ts';
export type { CollectTransaction } from './connectors/collect/collect-sink.ts';
export { FileSink, readCommittedLines } from './connectors/files/file-sink.ts';
export type { FileCommittable, FileSinkOptions } from './connectors/files/file-sink.ts';
export { PostgresSink } from './connectors/postgres/postgres-sink.ts';
export type { PostgresSinkOptions } from './connectors/postgres/postgres-sink.ts';
export type { PostgresConnectionOptions } from './connectors/postgres/settings.ts';
export { RedisStreamSource } from './connectors/redis/redis-source.ts';
export type { RedisStreamEntry, RedisStreamSourceOptions, RedisStreamSplit } from './connectors/redis/redis-source.ts';
export { RedisStreamSink } from './connectors/redis/redis-sink.ts';
export type { RedisStreamCommittable, RedisStreamSinkOptions } from './connectors/redis/redis-sink.ts';
export type { RedisConnectionOptions } from './connectors/redis/settings.ts';
export { JetStreamSource } from './connectors/nats/jetstream-source.ts';
export type { JetStreamRecord, JetStreamSourceOptions, JetStreamSplit } from './connectors/nats/jetstream-source.ts';
export { JetStreamSink } from './connectors/nats/jetstream-sink.ts';
export type { JetStreamCommitCounts, JetStreamCommittable, JetStreamSinkOptions } from './connectors/nats/jetstream-sink.ts';
export type { NatsConnectionOptions } from './connectors/nats/settings.ts';
export { uniformAt } from './connectors/generator/indexed-source.ts';
export type { JobEvent, JobMetrics, JobResult, JobStatus } from './cluster/job-events.ts';
export type { CheckpointStats, CheckpointStatus } from './checkpoint/coordinator/checkpoint-stats.ts';
export { CHECKPOINT_FAILURE_MESSAGES } from './checkpoint/failure-reason.ts';
export type { CheckpointFailureReason } from './checkpoint/failure-reason.ts';
export type { SubtaskCheckpointMetrics } from './checkpoint/ack.ts';
export type { Brand, CheckpointId, TaskId } from './core/ids.ts';
export type { Clock } from './core/time.ts';
export { CheckpointFailedError } from './checkpoint/coordinator/coordinator.ts';
export {
  ConfigError,
  ConnectorError,
  InjectedFault,
  JobDefinitionError,
  JobFailedError,
  RestoreError,
  StorageError,
  WeirError,
} from './core/errors.ts';
export type { WeirErrorCode } from './core/errors.ts';
