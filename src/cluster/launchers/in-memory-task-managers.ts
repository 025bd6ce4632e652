/**
 * Task managers in this thread, connected to the job master and to each other by in-memory links:
 * the same protocol, placement and serialized credit-based channels as worker threads, on the job
 * master's scheduler, so a seeded environment (the simulator) runs them deterministically, and a
 * FaultInjector reaches into their subtasks. Every message crosses the links as bytes (the codec
 * a TCP link uses), and each task manager runs with the context `context` builds for it: its own
 * graph, storage client and stream factory, as a remote one builds them (api/in-memory-task-manager-job.ts).
 */
import { hostname } from 'node:os';
import { errorMessage } from '../../core/errors.ts';
import type { Scheduler } from '../../core/time.ts';
import type { LaunchTaskManagers, TaskManagerPool } from '../job-master/remote-deployment.ts';
import { answerHeartbeatsUntilReady } from '../task-manager/startup-control.ts';
import { TaskManager, type TaskManagerContext } from '../task-manager/task-manager.ts';
import { inMemoryEncodedLinkPair } from '../transport/encoded-link.ts';
import type { Link } from '../../runtime/network/link.ts';
import type { DataMessage, ToJobMaster, ToTaskManager } from '../transport/protocol.ts';
import { DataConnection, HoldableEnd } from './in-memory-connections.ts';

/**
 * Faults of task managers in this thread that the simulator (and tests) inject; every hook is
 * optional. A stall holds back data messages (frames and credits) into a task manager, in order,
 * so some sent by an attempt arrive after it was cancelled, on a task manager the next attempt
 * reuses. A task manager stuck on cancel stands for a user function that never returns in a worker
 * thread: it answers nothing any more, and only the cancellation watchdog ends it.
 */
export interface InMemoryTaskManagerFaults {
  /**
   * Virtual ms to hold back the data links into task manager `to` from now on (0: not at all).
   * Asked as each data message arrives (`'message'`) and as `to` is told to cancel (`'cancel'`).
   */
  dataStallMs?(to: number, cause: 'message' | 'cancel'): number;
  /** Whether task manager `index`, told to cancel, gets stuck in user code. */
  stuckOnCancel?(index: number): boolean;
  /** A task manager stuck in user code was sent a deploy: it was kept for another attempt although the watchdog ended it. */
  violation?(message: string): void;
  /** A frame or credit of an earlier attempt reached a task manager running a newer one (and was dropped). */
  staleData?(index: number): void;
  /** A control message not of task manager `index`'s current epoch reached it (and was dropped). */
  staleControl?(index: number): void;
  /** Task managers were launched (an attempt's pool): `pool` strikes them, their processes and connections, while it runs. */
  launched?(pool: InMemoryPoolFaults): void;
  /** The partition of task manager `index` healed. */
  healed?(index: number): void;
  /** Task manager `index` learned its connection to the job master ended: the job master closed it (after a partition), or it broke. */
  lostJobMaster?(index: number, closedByJobMaster: boolean): void;
}

/**
 * What a fault may do to a launched pool of in-memory task managers, as TCP connections and
 * processes fail. Each returns false when it cannot strike: the pool is down, or the task
 * manager is gone already (dead, or cut off from the job master).
 */
export interface InMemoryPoolFaults {
  readonly count: number;
  /** Whether the pool was shut down (its attempts ended). */
  readonly down: boolean;
  /**
   * Task manager `index`'s process dies: its subtasks stop without a word, its connections drop
   * what is in flight, and, as the operating system closes a dead process's sockets, the job master
   * (the pool's onFailure) and its peers (peerLost) learn it at once.
   */
  kill(index: number): boolean;
  /**
   * Task manager `index` dies silently (a host that vanishes without a FIN or RST): as kill, but
   * nobody is told; the job master finds it by missed heartbeats.
   */
  hang(index: number): boolean;
  /** The control connection of task manager `index` breaks: the job master's pool reports it failed, the task manager stops (controlLost). */
  dropControl(index: number): boolean;
  /** The data connection between task managers `a` and `b` breaks: both fail the subtasks that use it (peerLost); it is made again once both learned it. */
  dropData(a: number, b: number): boolean;
  /**
   * Task manager `index` is cut off for `healAfterMs` virtual ms: every connection of it holds its
   * messages in both directions, in order, and delivers them at the heal, unless the connection
   * was closed meanwhile: then it learns that at the heal. A job master that declared it dead by
   * missed heartbeats closed its connection, so it stops then.
   */
  partition(index: number, healAfterMs: number): boolean;
}

/** The connection of an in-memory task manager to its job master was closed by the job master (after a partition), not broken. */
const CLOSED_BY_JOB_MASTER = 'the job master closed the connection';

/** `lose`: a message from task manager n to the job master for which it returns true is dropped (tests of lost heartbeats). */
export function launchInMemoryTaskManagers(
  count: number,
  /** What task manager `index` runs with, built the way a remote task manager builds it (not shared with the job master). */
  context: (index: number) => TaskManagerContext | Promise<TaskManagerContext>,
  scheduler: Scheduler,
  lose?: (taskManager: number, message: ToJobMaster) => boolean,
  faults: InMemoryTaskManagerFaults = {},
  /** What each offers (null: as many as the placement gives it), as the REST API shows it. */
  slotsPerTaskManager: number | null = null,
): LaunchTaskManagers {
  return async (): Promise<TaskManagerPool> => {
    // Built first, one after the other, before any link exists: a task manager that cannot build
    // the job fails the launch, as a worker's failing start does.
    // Without an await when every context is built at once: a seeded run's order of events must
    // not depend on how many turns the launch takes.
    const contexts: TaskManagerContext[] = [];
    for (let i = 0; i < count; i++) {
      const built = context(i);
      contexts.push(built instanceof Promise ? await built : built);
    }
    let down = false;
    /** Task managers gone: dead, or cut off from the job master for good. */
    const gone = new Set<number>();
    const partitioned = new Set<number>();
    const peers = Array.from({ length: count }, () => new Map<number, HoldableEnd<DataMessage, DataMessage>>());
    const connections: Array<readonly [number, number, DataConnection<DataMessage>]> = [];
    const stallMs = (to: number) => (cause: 'message' | 'cancel') => faults.dataStallMs?.(to, cause) ?? 0;
    for (let i = 0; i < count; i++) {
      for (let j = i + 1; j < count; j++) {
        const c = new DataConnection<DataMessage>(scheduler, [stallMs(i), stallMs(j)], () => !down && !gone.has(i) && !gone.has(j));
        peers[i]!.set(j, c.ends[0]);
        peers[j]!.set(i, c.ends[1]);
        connections.push([i, j, c]);
      }
    }
    let onFailure: ((index: number, error: Error) => void) | null = null;
    const early: Array<readonly [number, Error]> = [];
    const failed = (index: number, error: Error): void => {
      if (down) return;
      if (onFailure) onFailure(index, error);
      else early.push([index, error]);
    };
    const masters: Array<HoldableEnd<ToTaskManager, ToJobMaster>> = [];
    const controls: Array<HoldableEnd<ToJobMaster, ToTaskManager>> = [];
    const managers: TaskManager[] = [];
    for (let i = 0; i < count; i++) {
      const [atMaster, atManager] = inMemoryEncodedLinkPair<ToTaskManager, ToJobMaster>(scheduler);
      const master = new HoldableEnd<ToTaskManager, ToJobMaster>(scheduler);
      const manager = new HoldableEnd<ToJobMaster, ToTaskManager>(scheduler);
      master.attach(atMaster);
      manager.attach(atManager);
      // The job master learns a closed control connection as a failure of the task manager, as it learns a worker's exit.
      master.onClose((error) => failed(i, new Error(`control connection closed: ${errorMessage(error)}`, { cause: error })));
      masters.push(master);
      controls.push(manager);
      let stuck = false;
      const guarded: Link<ToJobMaster, ToTaskManager> = {
        send: (message, transfer) => {
          if (!stuck && !lose?.(i, message)) manager.send(message, transfer);
        },
        onMessage: (handler) =>
          manager.onMessage((m) => {
            if (stuck) {
              if (m.type === 'deploy')
                faults.violation?.(
                  `task manager ${i} was sent the deploy of attempt ${m.epoch.attempt} although it has been stuck in user code since a cancel`,
                );
              return;
            }
            if (m.type === 'cancel') {
              const ms = stallMs(i)('cancel');
              for (const link of peers[i]!.values()) link.stall(ms);
              if (faults.stuckOnCancel?.(i)) {
                // Its subtasks run no more (their thread is stuck); it never answers the cancel.
                stuck = true;
                managers[i]!.cancel();
                return;
              }
            }
            handler(m);
          }),
        close: () => manager.close(),
        onClose: (handler) =>
          manager.onClose((error) => {
            if (stuck) return;
            faults.lostJobMaster?.(i, error.message === CLOSED_BY_JOB_MASTER);
            handler(error);
          }),
      };
      // The same start as in a worker thread: hello first, then the task manager takes the link.
      managers.push(
        new TaskManager(contexts[i]!, answerHeartbeatsUntilReady(guarded, contexts[i]!.env.clock), peers[i]!, {
          staleData: () => faults.staleData?.(i),
          staleControl: () => faults.staleControl?.(i),
        }),
      );
    }
    /** Every end of task manager `index`'s connections, on both sides. */
    const endsOf = (index: number): Array<Pick<HoldableEnd<never, never>, 'hold' | 'unhold'>> => [
      masters[index]!,
      controls[index]!,
      ...connections.filter(([i, j]) => i === index || j === index).flatMap(([, , c]) => c.ends),
    ];
    const unavailable = (index: number): boolean => down || gone.has(index) || index < 0 || index >= count;
    faults.launched?.({
      count,
      get down() {
        return down;
      },
      kill: (index) => {
        if (unavailable(index)) return false;
        gone.add(index);
        const exited = new Error('its process exited');
        controls[index]!.end(exited);
        for (const end of peers[index]!.values()) end.end(exited);
        managers[index]!.cancel();
        return true;
      },
      hang: (index) => {
        if (unavailable(index)) return false;
        gone.add(index);
        masters[index]!.close();
        for (const [i, j, c] of connections) if (i === index || j === index) for (const end of c.ends) end.close();
        managers[index]!.cancel();
        return true;
      },
      dropControl: (index) => {
        if (unavailable(index)) return false;
        gone.add(index);
        masters[index]!.reset(new Error('connection reset'));
        return true;
      },
      dropData: (a, b) => {
        if (unavailable(a) || unavailable(b) || a === b) return false;
        const found = connections.find(([i, j]) => (i === a && j === b) || (i === b && j === a));
        return found?.[2].reset(new Error('connection reset')) ?? false;
      },
      partition: (index, healAfterMs) => {
        if (unavailable(index) || partitioned.has(index)) return false;
        partitioned.add(index);
        const ends = endsOf(index);
        for (const end of ends) end.hold();
        scheduler.schedule(healAfterMs, () => {
          partitioned.delete(index);
          for (const end of ends) end.unhold();
          faults.healed?.(index);
        });
        return true;
      },
    });
    const host = hostname();
    return {
      links: masters,
      taskManagers: masters.map(() => ({ host, pid: null, slots: slotsPerTaskManager, transport: 'in-memory', dataAddress: null })),
      onFailure: (handler) => {
        onFailure = handler;
        for (const [i, e] of early.splice(0)) handler(i, e);
      },
      shutdown: () => {
        if (down) return;
        down = true;
        // A task manager cut off by a partition cannot be reached: the job master closes its
        // connections, and it learns that (and stops) when the partition heals.
        const cut = (i: number) => partitioned.has(i) && !gone.has(i);
        const closed = new Error(CLOSED_BY_JOB_MASTER);
        for (const [i, m] of managers.entries()) if (!cut(i)) m.cancel();
        for (const [i, link] of masters.entries()) {
          if (cut(i)) link.end(closed);
          else link.close();
        }
        for (const [i, j, c] of connections) {
          if (cut(i) && !cut(j)) c.ends[1].end(closed);
          else if (cut(j) && !cut(i)) c.ends[0].end(closed);
          else for (const end of c.ends) end.close();
        }
      },
    };
  };
}
