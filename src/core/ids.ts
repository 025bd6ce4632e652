/** Branded identifiers: numbers and strings that cannot be mixed up at compile time. */
declare const brand: unique symbol;
export type Brand<T, B extends string> = T & { readonly [brand]: B };

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
  readonly vertex: number;
  readonly subtask: number;
}
