/**
 * Weir's public API: everything a job, a connector or an embedding application uses. Everything
 * else is internal and may change in any release.
 * @packageDocumentation
 */
export { StreamEnvironment } from './api/environment.ts';
export type {
  ClusterListenOptions,
  ClusterTls,
  CompletedCheckpointInfo,
  GeneratorOptions,
  JobClient,
  RunOptions,
  SourceOptions,
} from './api/environment.ts';
export type {
  CheckpointingOptions,
  ClusterOptions,
  ChangelogStateBackendOptions,
  EmbeddedStateBackendOptions,
  EmbeddedStateOptions,
  HeapStateBackendOptions,
  HeartbeatOptions,
  HighAvailabilityOptions,
  ResolvedChangelogStateBackend,
  ResolvedClusterOptions,
  ResolvedEmbeddedState,
  ResolvedEmbeddedStateBackend,
  ResolvedHeapStateBackend,
  ResolvedHeartbeat,
  ResolvedHighAvailability,
  ResolvedOptions,
  ResolvedS3Options,
  ResolvedStateBackend,
  ResolvedWrappedStateBackend,
  RestartStrategyOptions,
  S3Options,
  StateBackendOptions,
  StreamEnvironmentOptions,
  WrappedStateBackendOptions,
} from './api/options.ts';
export type { CheckpointingConfig } from './checkpoint/coordinator/config.ts';
export type { RestartStrategyConfig } from './cluster/job-master/restart-strategy.ts';
export { DataStream, DataStreamSink, KeyedStream, ConnectedStreams } from './api/data-stream.ts';
export type {
  Collector,
  CoProcessFunction,
  KeyedCoProcessFunction,
  KeyedProcessFunction,
  OnTimerContext,
  ProcessContext,
  ProcessFunction,
  RichFunction,
  RuntimeContext,
  TimerService,
} from './runtime/functions.ts';
// Event time: watermark strategies and the sentinel times.
export { WatermarkStrategy } from './runtime/time/watermark-strategy.ts';
export type { TimestampAssigner, WatermarkGenerator, WatermarkOutput } from './runtime/time/watermark-strategy.ts';
export { MAX_WATERMARK, MIN_WATERMARK, NO_TIMESTAMP } from './core/watermark.ts';
export type { ReaderOutput, Source, SourceReader } from './runtime/source.ts';
export { isReaderOutput } from './runtime/source.ts';
export type { SourceSplit, SplitAssignment, SplitBatch, SplitReader, SplitSource } from './runtime/split-source.ts';
export { SplitSourceReader } from './runtime/split-source-reader.ts';
export { splitOwner } from './runtime/split-assignment.ts';
export { OutputTag } from './runtime/output-tag.ts';
// Windows and joins in time (windows branch)
export { WindowedStream } from './api/windowed-stream.ts';
export { IntervalJoin, IntervalJoined, JoinedStreams, JoinedStreamsWhere, JoinedStreamsWithKeys, WindowJoin } from './api/joins.ts';
export type { ProcessJoinContext, ProcessJoinFunction } from './runtime/joins/interval-join.ts';
export {
  EventTimeSessionWindows,
  GlobalWindows,
  ProcessingTimeSessionWindows,
  SlidingEventTimeWindows,
  SlidingProcessingTimeWindows,
  TumblingEventTimeWindows,
  TumblingProcessingTimeWindows,
} from './runtime/windows/assigners.ts';
export type { MergeGroup, WindowAssigner, WindowAssignerContext } from './runtime/windows/assigners.ts';
export { GlobalWindow, TimeWindow } from './runtime/windows/window.ts';
export type { Window } from './runtime/windows/window.ts';
export { TriggerResult } from './runtime/windows/trigger.ts';
export type { OnMergeContext, Trigger, TriggerContext, TriggerState } from './runtime/windows/trigger.ts';
export { ContinuousEventTimeTrigger, CountTrigger, EventTimeTrigger, NeverTrigger, ProcessingTimeTrigger, PurgingTrigger } from './runtime/windows/triggers.ts';
export { CountEvictor, TimeEvictor } from './runtime/windows/evictors.ts';
export type { EvictFunction, Evictor, EvictorContext, TimestampedValue } from './runtime/windows/evictors.ts';
export type { KeyedStateStore, ProcessWindowFunction, WindowContext, WindowStateStore } from './runtime/windows/window-functions.ts';
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
export { uniformAt } from './connectors/generator/indexed-source.ts';
export type { JobEvent, JobMetrics, JobResult, JobStatus } from './cluster/job-master/job-events.ts';
export type { JobFinishedContext, JobModule, OnFinished, SimCheck } from './api/job-module.ts';
export type { CheckpointStats, CheckpointStatus } from './checkpoint/coordinator/checkpoint-stats.ts';
export { CHECKPOINT_FAILURE_MESSAGES } from './checkpoint/failure-reason.ts';
export type { CheckpointFailureReason } from './checkpoint/failure-reason.ts';
export type { SubtaskCheckpointMetrics } from './checkpoint/ack.ts';
export type { Brand, CheckpointId, TaskId } from './core/ids.ts';
export type { Clock } from './core/time.ts';
export { CheckpointFailedError } from './checkpoint/coordinator/coordinator.ts';
export {
  ClusterError,
  HaError,
  ConfigError,
  ConnectorError,
  InjectedFault,
  JobDefinitionError,
  JobFailedError,
  RestoreError,
  SourceRewindError,
  StorageError,
  WeirError,
} from './core/errors.ts';
export type { StorageErrorCode, WeirErrorCode } from './core/errors.ts';
