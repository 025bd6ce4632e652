/**
 * Control messages between the job master (coordinator) and subtasks. Each message is a closure run
 * later through the scheduler, never inline, as if it crossed a process boundary; the simulator
 * replaces this to delay or lose messages.
 */
import type { Scheduler } from '../core/time.ts';

export type RpcKind = 'trigger' | 'ack' | 'decline' | 'notify-complete' | 'notify-aborted' | 'task-event';

export interface Rpc {
  send(kind: RpcKind, deliver: () => void): void;
}

export function directRpc(scheduler: Scheduler): Rpc {
  return { send: (_kind, deliver) => scheduler.execute(deliver) };
}
