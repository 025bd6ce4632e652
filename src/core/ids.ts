/** Branded identifiers: numbers and strings that cannot be mixed up at compile time. */
declare const brand: unique symbol;
/** `T` marked with the name `B`, so ids of different kinds cannot be mixed up at compile time. */
export type Brand<T, B extends string> = T & {
  /** The brand (exists only for the type checker). */
  readonly [brand]: B;
};

/** A checkpoint's number within its job: 1, 2, ... */
export type CheckpointId = Brand<number, 'CheckpointId'>;
export type SubtaskIndex = Brand<number, 'SubtaskIndex'>;
export type KeyGroup = Brand<number, 'KeyGroup'>;
export type JobId = Brand<string, 'JobId'>;

export const checkpointId = (n: number): CheckpointId => n as CheckpointId;
export const subtaskIndex = (n: number): SubtaskIndex => n as SubtaskIndex;
export const keyGroup = (n: number): KeyGroup => n as KeyGroup;
export const jobId = (s: string): JobId => s as JobId;

/** One subtask of the job graph: vertex index and subtask index. */
export interface TaskId {
  /** The vertex's index in the job graph. */
  readonly vertex: number;
  /** The subtask's index within the vertex. */
  readonly subtask: number;
}

/** A subtask's identity as a map key (`vertex/subtask`): the one place it is spelled. */
export const taskKey = (t: TaskId): string => `${t.vertex}/${t.subtask}`;
