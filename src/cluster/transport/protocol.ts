/**
 * The messages between the job master and its task managers, and between task managers on the
 * data plane: discriminated unions of plain data (structured-clone safe, no class instances, no
 * functions), so every transport (in memory, worker threads, later TCP) carries the same protocol.
 */
import type { ChangelogFigures } from '../../state/changelog/figures.ts';
import type { CheckpointAck } from '../../checkpoint/ack.ts';
import type { CheckpointBarrier } from '../../checkpoint/barrier/barrier.ts';
import type { CheckpointFailureReason } from '../../checkpoint/failure-reason.ts';
import type { CheckpointMetadata } from '../../checkpoint/metadata/metadata.ts';
import type { CheckpointId, TaskId } from '../../core/ids.ts';
import type { Epoch } from './epoch.ts';
import { InjectedFault, JobFailedError, RestoreError, StorageError, WeirError, type WeirErrorCode } from '../../core/errors.ts';

/** The operators a job master expects a task manager's job graph to have, vertex by vertex. */
export interface GraphFingerprint {
  readonly vertices: ReadonlyArray<{ readonly name: string; readonly parallelism: number; readonly uids: readonly string[] }>;
}

/** Which task manager runs each subtask of the plan (index = position in ExecutionPlan.subtasks). */
export interface Placement {
  readonly taskManagers: number;
  readonly ofSubtask: readonly number[];
}

/**
 * Job master -> task manager. Every message names the epoch of the attempt it belongs to (the job
 * master's leader epoch and the attempt number): a task manager takes a `deploy` of a newer epoch
 * than its current one as the start of a new attempt (of the same epoch: the same attempt deployed
 * again from an older checkpoint), and drops and counts any other message not of its current epoch.
 */
export type ToTaskManager =
  | {
      readonly type: 'deploy';
      readonly epoch: Epoch;
      readonly runId: string;
      readonly fingerprint: GraphFingerprint;
      readonly placement: Placement;
      readonly restore: CheckpointMetadata | null;
      readonly firstCheckpointFull: boolean;
    }
  /** Opens the deployed subtasks' operators (a sink re-commits what it recovered): sent after the job master reconciled the sinks. */
  | { readonly type: 'open'; readonly epoch: Epoch }
  | { readonly type: 'start'; readonly epoch: Epoch }
  | { readonly type: 'trigger'; readonly epoch: Epoch; readonly task: TaskId; readonly barrier: CheckpointBarrier }
  | { readonly type: 'notify-complete'; readonly epoch: Epoch; readonly task: TaskId; readonly checkpointId: CheckpointId }
  | { readonly type: 'notify-aborted'; readonly epoch: Epoch; readonly task: TaskId; readonly checkpointId: CheckpointId }
  | { readonly type: 'cancel'; readonly epoch: Epoch }
  | { readonly type: 'heartbeat'; readonly epoch: Epoch; readonly seq: number };

/** An error as data: enough to name it and rebuild a WeirError of the same code on the other side. */
export interface WireError {
  readonly name: string;
  readonly message: string;
  readonly code: string | null;
  /** The file at fault of a StorageError. */
  readonly file: string | null;
  readonly stack: string | null;
  /** Its cause, as data too (a few levels at most), so the job master sees the chain the task manager saw. */
  readonly cause?: WireError | null;
}

/** Levels of `cause` an error keeps on the wire. */
const WIRE_CAUSE_DEPTH = 4;

/** Live figures of one subtask, for `weir run` progress and JobMetrics. */
export interface TaskFigures {
  readonly task: TaskId;
  readonly sourceRecordsOut: number;
  readonly sinkRecordsIn: number;
  readonly recordsIn: number;
  readonly recordsWritten: number;
  readonly backpressuredMs: number;
  /** The changelog backends' figures, or null: the subtask uses none. */
  readonly changelog: ChangelogFigures | null;
}

/**
 * What a task manager sent and received on its data links (frames and credits), over its whole
 * life. Bytes are the frames' payload (each encoded element's `byteLength`), whatever the transport
 * adds around a message; credits carry none and count as messages only.
 */
export interface DataTrafficFigures {
  readonly bytesSent: number;
  readonly bytesReceived: number;
  /** Frames and credit messages. */
  readonly messagesSent: number;
  /** Frames and credit messages, also those for no channel there (dropped). */
  readonly messagesReceived: number;
}

/**
 * Task manager -> job master. Every message but `hello` names the epoch of the attempt it belongs
 * to (the one the task manager was deployed with, or that of the message it answers); the job
 * master drops and counts one of another epoch than the attempt it runs.
 */
export type ToJobMaster =
  /** A task manager's first word, as soon as its thread runs: before any attempt named it, so without an epoch. */
  | { readonly type: 'hello' }
  | {
      readonly type: 'deployed';
      readonly epoch: Epoch;
      readonly tasks: ReadonlyArray<{ readonly task: TaskId; readonly name: string; readonly isSource: boolean }>;
    }
  | { readonly type: 'deploy-failed'; readonly epoch: Epoch; readonly error: WireError }
  /** The answer to `open`: every subtask of this task manager opened its operators. */
  | { readonly type: 'opened'; readonly epoch: Epoch }
  | { readonly type: 'open-failed'; readonly epoch: Epoch; readonly error: WireError }
  | { readonly type: 'ack'; readonly epoch: Epoch; readonly ack: CheckpointAck }
  | {
      readonly type: 'decline';
      readonly epoch: Epoch;
      readonly task: TaskId;
      readonly checkpointId: CheckpointId;
      readonly reason: CheckpointFailureReason;
      readonly cause: WireError | null;
    }
  | { readonly type: 'end-of-data'; readonly epoch: Epoch; readonly task: TaskId }
  | { readonly type: 'task-finished'; readonly epoch: Epoch; readonly task: TaskId }
  | { readonly type: 'task-failed'; readonly epoch: Epoch; readonly task: TaskId; readonly error: WireError }
  /**
   * The answer to a heartbeat: its seq, and `at`, the task manager's wall-clock ms when it answered
   * (from its Environment's clock, with sub-millisecond steps), from which the job master estimates
   * the task manager's clock offset (clock-offsets.ts).
   */
  | { readonly type: 'heartbeat'; readonly epoch: Epoch; readonly seq: number; readonly at: number }
  /**
   * `data`: what the task manager sent and received on its data links over its whole life (not
   * reset per attempt). `clockMs`: the task manager's Clock.now() when it read the figures, the
   * base of their clock stamps (a changelog's `materializedAtMs`): the job master keeps their
   * distance to it, not the stamps, as its clock is another (another host, process or thread).
   */
  | {
      readonly type: 'metrics';
      readonly epoch: Epoch;
      readonly clockMs: number;
      readonly tasks: readonly TaskFigures[];
      readonly data: DataTrafficFigures;
    }
  /** The answer to `cancel`: every subtask of this task manager stopped. */
  | { readonly type: 'canceled'; readonly epoch: Epoch };

/**
 * Task manager <-> task manager, per channel of the execution plan (`channel` is its index in
 * ExecutionPlan.channels). A frame is one element in the wire format (element-codec.ts); credit
 * says how many more data buffers the consumer can hold.
 */
export type DataMessage =
  | { readonly type: 'frame'; readonly channel: number; readonly frame: Uint8Array }
  | { readonly type: 'credit'; readonly channel: number; readonly buffers: number };

export function toWireError(err: unknown, depth = 0): WireError {
  if (err instanceof Error) {
    const { code, file } = err as { code?: unknown; file?: unknown };
    return {
      name: err.name,
      message: err.message,
      code: typeof code === 'string' ? code : null,
      file: typeof file === 'string' ? file : null,
      stack: err.stack ?? null,
      cause: err.cause === undefined || depth >= WIRE_CAUSE_DEPTH ? null : toWireError(err.cause, depth + 1),
    };
  }
  return { name: 'Error', message: String(err), code: null, file: null, stack: null };
}

/**
 * The error again, of the class its code stands for, so the job master decides as it would in one
 * thread: a StorageError falls back to an older checkpoint, a JobFailedError or RestoreError is
 * not retried.
 */
export function fromWireError(wire: WireError): Error {
  let err: Error;
  switch (wire.code) {
    case 'JOB_FAILED':
      err = new JobFailedError(wire.message);
      break;
    case 'RESTORE_FAILED':
      err = new RestoreError(wire.message);
      break;
    case 'CORRUPT_FILE':
    case 'MISSING_FILE':
    case 'UNSUPPORTED_VERSION':
    case 'STORAGE_IO':
    case 'STORAGE_UNREACHABLE': {
      const file = wire.file ?? '';
      const prefix = `${file}: `;
      err = new StorageError(wire.code, file, wire.message.startsWith(prefix) ? wire.message.slice(prefix.length) : wire.message);
      break;
    }
    case 'INJECTED_FAULT':
      err = new InjectedFault(wire.message.replace(/^injected fault at /, ''));
      break;
    case null:
      err = new Error(wire.message);
      break;
    default:
      err = new WeirError(wire.code as WeirErrorCode, wire.message);
  }
  if (wire.stack !== null) err.stack = wire.stack;
  if (wire.cause) err.cause = fromWireError(wire.cause);
  return err;
}
