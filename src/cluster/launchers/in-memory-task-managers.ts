/**
 * Task managers in this thread, connected to the job master and to each other by in-memory links:
 * the same protocol, placement and serialized credit-based channels as worker threads, on the job
 * master's scheduler, so a seeded environment (the simulator) runs them deterministically, and a
 * FaultInjector reaches into their subtasks. Every message crosses the links as bytes (the codec
 * a TCP link uses), and each task manager runs with the context `context` builds for it: its own
 * graph, storage client and stream factory, as a remote one builds them (api/in-memory-task-manager-job.ts).
 */
import { hostname } from 'node:os';
import type { Scheduler } from '../../core/time.ts';
import type { LaunchTaskManagers, TaskManagerPool } from '../job-master/remote-deployment.ts';
import { answerHeartbeatsUntilReady } from '../task-manager/startup-control.ts';
import { TaskManager, type TaskManagerContext } from '../task-manager/task-manager.ts';
import { inMemoryEncodedLinkPair } from '../transport/encoded-link.ts';
import type { Link } from '../../runtime/network/link.ts';
import type { DataMessage, ToJobMaster, ToTaskManager } from '../transport/protocol.ts';

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
  /** Task managers were launched (an attempt's pool): `pool` kills one of them alone, while it runs. */
  launched?(pool: InMemoryPoolFaults): void;
}

/** What a fault may do to a launched pool of in-memory task managers. */
export interface InMemoryPoolFaults {
  readonly count: number;
  /** Whether the pool was shut down (its attempts ended). */
  readonly down: boolean;
  /**
   * Task manager `index` dies alone, as a process does: its subtasks stop without a word, its
   * links drop what is in flight and deliver nothing more, in both directions, and nothing calls
   * the job master back (it learns it from missed heartbeats). False when it was dead already or
   * the pool is down.
   */
  kill(index: number): boolean;
}

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
    const peers = Array.from({ length: count }, () => new Map<number, Link<DataMessage, DataMessage>>());
    const incoming = Array.from({ length: count }, () => [] as StallableLink<DataMessage>[]);
    /** Every link end of each task manager (its control link and both ends of its data links), to cut when it dies. */
    const endsOf = Array.from({ length: count }, () => [] as Array<{ close(): void }>);
    const all: Array<{ close(): void }> = [];
    const stallMs = (to: number) => (cause: 'message' | 'cancel') => faults.dataStallMs?.(to, cause) ?? 0;
    for (let i = 0; i < count; i++) {
      for (let j = i + 1; j < count; j++) {
        const [a, b] = inMemoryEncodedLinkPair<DataMessage, DataMessage>(scheduler);
        const atI = new StallableLink(a, scheduler, stallMs(i));
        const atJ = new StallableLink(b, scheduler, stallMs(j));
        peers[i]!.set(j, atI);
        peers[j]!.set(i, atJ);
        incoming[i]!.push(atI);
        incoming[j]!.push(atJ);
        all.push(atI, atJ);
        endsOf[i]!.push(atI, atJ);
        endsOf[j]!.push(atI, atJ);
      }
    }
    const links: Array<Link<ToTaskManager, ToJobMaster>> = [];
    const managers: TaskManager[] = [];
    for (let i = 0; i < count; i++) {
      const [master, manager] = inMemoryEncodedLinkPair<ToTaskManager, ToJobMaster>(scheduler);
      links.push(master);
      all.push(master);
      endsOf[i]!.push(master);
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
              for (const link of incoming[i]!) link.stall(ms);
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
      };
      // The same start as in a worker thread: hello first, then the task manager takes the link.
      managers.push(
        new TaskManager(contexts[i]!, answerHeartbeatsUntilReady(guarded, contexts[i]!.env.clock), peers[i]!, {
          staleData: () => faults.staleData?.(i),
          staleControl: () => faults.staleControl?.(i),
        }),
      );
    }
    let down = false;
    const dead = new Set<number>();
    faults.launched?.({
      count,
      get down() {
        return down;
      },
      kill: (index) => {
        if (down || dead.has(index) || index < 0 || index >= count) return false;
        dead.add(index);
        for (const end of endsOf[index]!) end.close();
        managers[index]!.cancel();
        return true;
      },
    });
    const host = hostname();
    return {
      links,
      taskManagers: links.map(() => ({ host, pid: null, slots: slotsPerTaskManager, transport: 'in-memory', dataAddress: null })),
      onFailure: () => {
        // Nothing reports a task manager's death in this thread: the job master's heartbeats find it.
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

/**
 * The receiving end of a data link that can be held back for a while: what arrives meanwhile
 * waits, in order, and is handed on once no stall is running (a slow network between two hosts).
 */
class StallableLink<T> implements Link<T, T> {
  private readonly waiting: T[] = [];
  private stalls = 0;
  private handler: ((message: T) => void) | null = null;
  private closed = false;

  constructor(
    private readonly inner: Link<T, T>,
    private readonly scheduler: Scheduler,
    private readonly stallMs: (cause: 'message' | 'cancel') => number,
  ) {
    inner.onMessage((m) => this.arrive(m));
  }

  send(message: T, transfer?: readonly ArrayBuffer[]): void {
    this.inner.send(message, transfer);
  }

  onMessage(handler: (message: T) => void): void {
    this.handler = handler;
  }

  close(): void {
    this.closed = true;
    this.waiting.length = 0;
    this.inner.close();
  }

  stall(ms: number): void {
    if (ms <= 0 || this.closed) return;
    this.stalls++;
    this.scheduler.schedule(ms, () => {
      this.stalls--;
      this.release();
    });
  }

  private arrive(message: T): void {
    if (this.closed) return;
    this.stall(this.stallMs('message'));
    this.waiting.push(message);
    this.release();
  }

  private release(): void {
    while (this.stalls === 0 && !this.closed && this.waiting.length > 0) this.handler?.(this.waiting.shift() as T);
  }
}
