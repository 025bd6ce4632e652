/**
 * Control messages between the job master (coordinator) and subtasks. Each message is a closure run
 * later through the scheduler, never inline, as if it crossed a process boundary; the simulator
 * replaces this to delay or lose messages.
 */
import type { Scheduler } from '../core/time.ts';

export type RpcKind = 'trigger' | 'ack' | 'decline' | 'notify-complete' | 'notify-aborted' | 'task-event';

/** Which subtask a trigger goes to and for which checkpoint, for observers (the simulator counts triggers overtaken on the way). */
export interface TriggerAddress {
  readonly checkpointId: number;
  /** The attempt, vertex and subtask it is for. */
  readonly target: string;
}

export interface Rpc {
  send(kind: RpcKind, deliver: () => void, trigger?: TriggerAddress): void;
}

export function directRpc(scheduler: Scheduler): Rpc {
  return { send: (_kind, deliver) => scheduler.execute(deliver) };
}
