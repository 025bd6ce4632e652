/**
 * A task manager process (`weir taskmanager --connect host:port`): it joins a job master over TCP,
 * gets the job's code (shipped, or its own copy at the same path, checked by hash), builds the job,
 * says it is ready, and serves each pool it is assigned to: its control connection carries the
 * attempt protocol to a `TaskManager`, its data connections link it with its peers. When the control
 * connection closes (the job master released the pool, failed over, or is gone) it stops every
 * subtask at once (`controlLost`: nothing it ran commits afterwards) and dials again; a job master
 * that no longer answers ends the process, or, with `retry`, is waited for. While it serves a job, a
 * watchdog thread ends the process when its main thread is stuck in user code for longer than the
 * job master waits for it (`stuck-thread-watchdog.ts`).
 *
 * What runs the job (loading the module, building the graph) is given by the caller (`api/`), as
 * for task managers in worker threads; this file knows the cluster, not the job API.
 */
import { hostname } from 'node:os';
import { wallTimer, systemClock } from '../../core/adapters.ts';
import { ClusterError, errorMessage, WeirError } from '../../core/errors.ts';
import { dialPeer, type DialedPeer } from '../transport/handshake.ts';
import type { FramedSocket } from '../transport/framing.ts';
import { toWireError, type DataMessage, type ToJobMaster, type ToTaskManager } from '../transport/protocol.ts';
import { socketLink, type SocketLink } from '../transport/socket-link.ts';
import { formatAddress, isLoopbackHost } from '../transport/address.ts';
import type { Link } from '../../runtime/network/link.ts';
import type { TlsSettings } from '../transport/tls-settings.ts';
import { answerHeartbeatsUntilReady } from '../task-manager/startup-control.ts';
import { TaskManager, type TaskManagerContext } from '../task-manager/task-manager.ts';
import { DataMesh } from './data-mesh.ts';
import { checkSharedDirProbes } from './shared-dirs.ts';
import { StuckThreadWatchdog } from './stuck-thread-watchdog.ts';
import {
  decodeSessionMessage,
  encodeSessionMessage,
  type JobSubmission,
  type JoinWelcome,
  type TaskManagerRegistration,
  type ToJoiningTaskManager,
} from './session-messages.ts';

/** How a task manager process joins. */
export interface JoinSettings {
  readonly host: string;
  readonly port: number;
  readonly token: string;
  readonly tls: TlsSettings | null;
  readonly insecure: boolean;
  readonly slots: number;
  /** The address its peers reach its data listener at; null: the local address of its control connection. */
  readonly dataHost: string | null;
  /** Its data listener's port (0: any free one). */
  readonly dataPort: number;
  /** Where the data listener binds (default: every interface when dataHost is null, else dataHost). */
  readonly dataBind: string | null;
  /** Wait for a job master (again) instead of ending when none answers. */
  readonly retry: boolean;
  /**
   * Where to dial each time (high availability: the leader the HA store names), overriding
   * host/port; null: no leader announced yet (wait and ask again). With it, the process waits for
   * the next leader whenever its job master is gone.
   */
  readonly resolve?: () => Promise<{ readonly host: string; readonly port: number; readonly label: string } | null>;
  readonly retryIntervalMs: number;
  readonly connectTimeoutMs: number;
  readonly weirVersion: string;
  readonly log: (line: string) => void;
}

/** What the job's side provides: the module from the code reference, and a built job per pool index. */
export interface JobRunner {
  /**
   * The job module file to load for `job` (materialized from shipped bytes, or the local file whose
   * hash was checked); `fetch` asks the job master for the bytes.
   * @throws ClusterError (CLUSTER_REFUSED) when the local module's hash differs from the job master's.
   */
  moduleOf(job: JobSubmission, fetch: () => Promise<Uint8Array>, who: string): Promise<string>;
  /** Builds the job from the module once; the result gives a context per index. */
  prepare(job: JobSubmission, modulePath: string, who: string): Promise<(index: number) => TaskManagerContext>;
}

/** Why the process ends. */
export type ProcessEnd =
  | { readonly kind: 'stopped' }
  | { readonly kind: 'job-master-gone'; readonly address: string }
  | { readonly kind: 'refused'; readonly error: Error };

/** Runs until `stop` resolves, the job master is gone (without `retry`), or the job master refuses this task manager. */
export async function runTaskManagerProcess(settings: JoinSettings, runner: JobRunner, stop: Promise<void>): Promise<ProcessEnd> {
  const address = formatAddress(settings.host, settings.port);
  const bindHost = settings.dataBind ?? settings.dataHost ?? (isLoopbackHost(settings.host) ? '127.0.0.1' : '0.0.0.0');
  const mesh = await DataMesh.listen({
    host: bindHost,
    port: settings.dataPort,
    token: settings.token,
    tls: settings.tls,
    insecure: settings.insecure,
    handshakeTimeoutMs: settings.connectTimeoutMs,
    weirVersion: settings.weirVersion,
    log: settings.log,
  });
  const watchdog = new StuckThreadWatchdog(`weir taskmanager (pid ${process.pid})`);
  let stopped = false;
  let current: Session | null = null;
  void stop.then(() => {
    stopped = true;
    current?.end(null);
  });
  const prepared = new Map<string, Promise<(index: number) => TaskManagerContext>>();
  let everJoined = false;
  try {
    while (!stopped) {
      let dialed: DialedPeer;
      let target: { readonly host: string; readonly port: number } = settings;
      if (settings.resolve !== undefined) {
        const found = await settings.resolve().catch((err: unknown) => {
          settings.log(`cannot ask the HA store for the leader (${errorMessage(err)}); trying again in ${settings.retryIntervalMs} ms`);
          return undefined;
        });
        if (found === null) settings.log(`no leader has announced its address yet; asking again in ${settings.retryIntervalMs} ms`);
        if (found === null || found === undefined) {
          await sleep(settings.retryIntervalMs, stop);
          continue;
        }
        target = found;
      }
      try {
        dialed = await dialPeer({
          host: target.host,
          port: target.port,
          token: settings.token,
          tls: settings.tls,
          role: 'control',
          body: registration(settings, mesh.port) as unknown as Record<string, unknown>,
          weirVersion: settings.weirVersion,
          timeoutMs: settings.connectTimeoutMs,
        });
      } catch (err) {
        if (stopped) break;
        if (err instanceof ClusterError && err.code === 'CLUSTER_REFUSED') return { kind: 'refused', error: err };
        if (!settings.retry && settings.resolve === undefined) {
          if (everJoined) return { kind: 'job-master-gone', address };
          throw err;
        }
        settings.log(`no job master at ${formatAddress(target.host, target.port)} (${errorMessage(err)}); trying again in ${settings.retryIntervalMs} ms`);
        await sleep(settings.retryIntervalMs, stop);
        continue;
      }
      everJoined = true;
      const welcome = dialed.welcome as unknown as JoinWelcome;
      const session = new Session(dialed.framed, welcome, mesh, runner, prepared, settings);
      current = session;
      watchdog.arm(welcome.job.stuckLimitMs);
      const end = await session.run();
      watchdog.disarm();
      current = null;
      if (end !== null) return { kind: 'refused', error: end };
    }
    return { kind: 'stopped' };
  } finally {
    watchdog.close();
    await mesh.close();
  }
}

/** One control connection: registration, code, readiness, then the pools it serves. */
class Session {
  private taskManager: TaskManager | null = null;
  /** The data links of the pool it serves: closed with the control connection. */
  private peers: Array<{ close(): void }> = [];
  private resolveEnd: ((refusal: Error | null) => void) | null = null;

  constructor(
    private readonly framed: FramedSocket,
    private readonly welcome: JoinWelcome,
    private readonly mesh: DataMesh,
    private readonly runner: JobRunner,
    private readonly prepared: Map<string, Promise<(index: number) => TaskManagerContext>>,
    private readonly settings: JoinSettings,
  ) {}

  /** Resolves when the connection closed (null) or the job master refused this task manager (the error). */
  run(): Promise<Error | null> {
    const ended = new Promise<Error | null>((resolve) => (this.resolveEnd = resolve));
    const { framed } = this;
    const code = new Pending<Uint8Array>();
    let context: ((index: number) => TaskManagerContext) | null = null;
    framed.onClose((error) => {
      code.fail(error ?? new ClusterError('CLUSTER_CONNECTION_LOST', framed.remote, 'the job master closed the connection'));
      const lost = new ClusterError('CLUSTER_CONNECTION_LOST', `job master ${framed.remote}`, `control connection closed${error ? `: ${error.message}` : ''}`, {
        cause: error,
      });
      this.taskManager?.controlLost(lost);
      this.taskManager = null;
      for (const link of this.peers) link.close();
      this.peers = [];
      this.end(null);
    });
    framed.onFrame((bytes) => {
      let m: ToJoiningTaskManager;
      try {
        m = decodeSessionMessage<ToJoiningTaskManager>(bytes, `job master ${framed.remote}`);
      } catch (err) {
        framed.close(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      if (m.type === 'code') code.resolve(m.bytes);
      else if (context === null) framed.close(new Error('assigned to a pool before it was ready'));
      else this.serve(m, context);
    });
    const { job } = this.welcome;
    const key = `${job.jobId}/${job.code.hash}`;
    void (async () => {
      try {
        checkSharedDirProbes(job.sharedDirs, `job master ${framed.remote}`);
        let prepared = this.prepared.get(key);
        if (prepared === undefined) {
          const who = `task manager ${this.welcome.registration}`;
          const modulePath = await this.runner.moduleOf(
            job,
            () => {
              framed.write(encodeSessionMessage({ type: 'fetch-code' }));
              return code.promise;
            },
            who,
          );
          prepared = this.runner.prepare(job, modulePath, who);
          this.prepared.set(key, prepared);
          prepared.catch(() => this.prepared.delete(key));
        }
        context = await prepared;
        framed.write(encodeSessionMessage({ type: 'ready' }));
        this.settings.log(`joined job ${job.jobId} at ${framed.remote} as ${this.welcome.registration}; ready`);
      } catch (err) {
        if (err instanceof ClusterError && err.code === 'CLUSTER_CONNECTION_LOST') return;
        framed.write(encodeSessionMessage({ type: 'load-failed', error: toWireError(err) }));
        const refusal =
          err instanceof WeirError
            ? err
            : new ClusterError('CLUSTER_REFUSED', framed.remote, `cannot run job ${job.jobId}: ${errorMessage(err)}`, { cause: err });
        this.end(refusal);
      }
    })();
    return ended;
  }

  /** Ends the session once: closes the connection, and says whether the job master refused this task manager. */
  end(refusal: Error | null): void {
    const resolve = this.resolveEnd;
    if (resolve === null) return;
    this.resolveEnd = null;
    // A refusal was just written (load-failed): send it before closing.
    if (refusal === null) this.framed.close();
    else this.framed.end();
    resolve(refusal);
  }

  /**
   * A data link whose break also ends this pool: the TaskManager fails the subtasks using it
   * (peerLost), then the control connection closes once that has been sent, so the job master forms
   * a new pool with new data connections instead of deploying again over the broken one.
   */
  private endsPoolWhenBroken(link: SocketLink<DataMessage, DataMessage>): Link<DataMessage, DataMessage> {
    return {
      send: link.send,
      onMessage: link.onMessage,
      close: link.close,
      onClose: (handler) =>
        link.onClose((error) => {
          handler(error);
          queueMicrotask(() => this.framed.end());
        }),
    };
  }

  /**
   * While it runs an attempt (from its deploy to its cancel) the job master sends a heartbeat every
   * interval; a job master cut off by
   * the network (a host pulled away, a partition) closes nothing, so silence longer than `limitMs`
   * ends the connection here as a close would: the subtasks stop (controlLost) and the process dials
   * again, through the HA store to the next leader. Returns the stamp the
   * control link's messages update.
   */
  private watchJobMasterSilence(limitMs: number): { atMs: number; watching: boolean } {
    const heard = { atMs: systemClock.now(), watching: false };
    const check = () => {
      if (this.resolveEnd === null) return;
      const silentMs = systemClock.now() - heard.atMs;
      if (!heard.watching || silentMs <= limitMs) {
        wallTimer(heard.watching ? limitMs - silentMs + 1 : limitMs, check, { unref: true });
        return;
      }
      this.settings.log(
        `no message from the job master at ${this.framed.remote} for ${Math.round(silentMs)} ms (heartbeat.timeoutMs ${limitMs}): treating it as gone`,
      );
      this.framed.close(new ClusterError('CLUSTER_CONNECTION_LOST', `job master ${this.framed.remote}`, `silent for ${Math.round(silentMs)} ms`));
    };
    wallTimer(limitMs + 1, check, { unref: true });
    return heard;
  }

  /** The assignment: the connection switches to the attempt protocol; the data links come up; a TaskManager serves the pool. */
  private serve(m: Extract<ToJoiningTaskManager, { type: 'assign' }>, context: (index: number) => TaskManagerContext): void {
    const link = socketLink<ToJobMaster, ToTaskManager>(this.framed);
    // Only with an HA store is there another job master to go to; without one, a stalled connection
    // waits for the network (the job master has dropped this task manager by then, and says so when it heals).
    const heard = this.settings.resolve === undefined ? { atMs: 0, watching: false } : this.watchJobMasterSilence(this.welcome.job.jobMasterSilenceMs);
    const onMessage = (handler: (m: ToTaskManager) => void) =>
      link.onMessage((message) => {
        heard.atMs = systemClock.now();
        // Heartbeats flow from an attempt's deploy to its cancel; a warm pool waits in silence between attempts.
        if (message.type === 'deploy') heard.watching = true;
        else if (message.type === 'cancel') heard.watching = false;
        handler(message);
      });
    // The session keeps the connection's one close handler (it must redial); it calls controlLost itself.
    const control = answerHeartbeatsUntilReady({ send: link.send, onMessage, close: link.close }, systemClock);
    this.settings.log(`pool ${m.pool}: task manager ${m.index} of ${m.peers.length + 1}`);
    this.mesh.connect(m.pool, m.index, m.peers, this.settings.connectTimeoutMs).then(
      (peers) => {
        if (this.resolveEnd === null) {
          for (const l of peers.values()) l.close();
          return;
        }
        this.peers = [...peers.values()];
        this.taskManager = new TaskManager(context(m.index), control, new Map([...peers].map(([i, l]) => [i, this.endsPoolWhenBroken(l)])));
      },
      (err: unknown) => {
        this.settings.log(`pool ${m.pool}: ${errorMessage(err)}`);
        this.framed.close(err instanceof Error ? err : new Error(String(err)));
      },
    );
  }
}

/** A value one side waits for and the other resolves or fails. */
class Pending<T> {
  readonly promise: Promise<T>;
  resolve!: (value: T) => void;
  fail!: (error: Error) => void;
  constructor() {
    this.promise = new Promise<T>((resolve, reject) => {
      this.resolve = resolve;
      this.fail = reject;
    });
    this.promise.catch(() => {});
  }
}

function registration(settings: JoinSettings, dataPort: number): TaskManagerRegistration {
  return {
    slots: settings.slots,
    // Empty: the job master takes the address it sees this connection come from.
    dataHost: settings.dataHost ?? '',
    dataPort,
    host: hostname(),
    pid: process.pid,
  };
}

function sleep(ms: number, stop: Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const timer = wallTimer(ms, resolve);
    void stop.then(() => {
      timer.cancel();
      resolve();
    });
  });
}
