/**
 * Task managers in this thread, connected to the job master and to each other by in-memory links:
 * the same protocol, placement and serialized credit-based channels as worker threads, on the job
 * master's scheduler, so a seeded environment (the simulator) runs them deterministically, and a
 * FaultInjector reaches into their subtasks. They share the job master's graph and storage.
 */
import type { Scheduler } from '../core/time.ts';
import type { LaunchTaskManagers, TaskManagerPool } from './remote-deployment.ts';
import { answerHeartbeatsUntilReady } from './startup-control.ts';
import { TaskManager, type TaskManagerContext } from './task-manager.ts';
import { inMemoryLinkPair, type Link } from './transport/link.ts';
import type { DataMessage, ToJobMaster, ToTaskManager } from './transport/protocol.ts';

/** `lose`: a message from task manager n to the job master for which it returns true is dropped (tests of lost heartbeats). */
export function launchInMemoryTaskManagers(
  count: number,
  context: (index: number) => TaskManagerContext,
  scheduler: Scheduler,
  lose?: (taskManager: number, message: ToJobMaster) => boolean,
): LaunchTaskManagers {
  return async (): Promise<TaskManagerPool> => {
    const peers = Array.from({ length: count }, () => new Map<number, Link<DataMessage, DataMessage>>());
    const all: Array<{ close(): void }> = [];
    for (let i = 0; i < count; i++) {
      for (let j = i + 1; j < count; j++) {
        const [a, b] = inMemoryLinkPair<DataMessage, DataMessage>(scheduler);
        peers[i]!.set(j, a);
        peers[j]!.set(i, b);
        all.push(a);
      }
    }
    const links: Array<Link<ToTaskManager, ToJobMaster>> = [];
    const managers: TaskManager[] = [];
    for (let i = 0; i < count; i++) {
      const [master, manager] = inMemoryLinkPair<ToTaskManager, ToJobMaster>(scheduler);
      links.push(master);
      all.push(master);
      const lossy: Link<ToJobMaster, ToTaskManager> = lose
        ? {
            send: (message, transfer) => {
              if (!lose(i, message)) manager.send(message, transfer);
            },
            onMessage: (handler) => manager.onMessage(handler),
            close: () => manager.close(),
          }
        : manager;
      // The same start as in a worker thread: hello first, then the task manager takes the link.
      managers.push(new TaskManager(context(i), answerHeartbeatsUntilReady(lossy), peers[i]!));
    }
    let down = false;
    return {
      links,
      onFailure: () => {
        // In this thread a task manager cannot die on its own: its subtasks fail through the protocol.
      },
      shutdown: () => {
        if (down) return;
        down = true;
        for (const m of managers) m.cancel();
        for (const link of all) link.close();
      },
    };
  };
}
