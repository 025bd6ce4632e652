/**
 * The job master's side of task managers that join over TCP: it listens at the address the user
 * gave, authenticates every connection (handshake.ts), welcomes each task manager with the job it
 * runs, ships the job's code to one that asks, and keeps the registered set: a task manager is
 * *ready* once it built the job, *assigned* while it is in a pool, *gone* once its connection closed.
 * Pools are formed from the ready ones (`assign`); from then on each connection carries the attempt
 * protocol. A task manager whose pool is shut down reconnects and registers again (the job master
 * closes its connection; the task manager redials), so every new pool starts from fresh connections
 * and nothing of an old attempt can reach it.
 */
import { ClusterError, WeirError } from '../../core/errors.ts';
import { fromWireError, type ToJobMaster, type ToTaskManager } from '../transport/protocol.ts';
import type { FramedSocket } from '../transport/framing.ts';
import { listenPeers, type ListenSettings, type PeerHello, type PeerListener } from '../transport/handshake.ts';
import { socketLink } from '../transport/socket-link.ts';
import { hostOfAddress } from '../transport/address.ts';
import type { Link } from '../../runtime/network/link.ts';
import {
  decodeSessionMessage,
  encodeSessionMessage,
  type FromJoiningTaskManager,
  type JobSubmission,
  type JoinWelcome,
  type PeerAddress,
  type TaskManagerRegistration,
} from './session-messages.ts';

/** Where and how the job master accepts task managers. */
export interface RegistrySettings extends ListenSettings {
  readonly job: JobSubmission;
  /** The bundled job module, shipped to a task manager that asks (`job.code.kind === 'bundle'`). */
  readonly codeBytes: Uint8Array | null;
  /** Lines for the user (joins, refusals, losses). */
  readonly log: (line: string) => void;
}

/** One task manager that joined. */
export interface Registration {
  readonly name: string;
  readonly registration: TaskManagerRegistration;
  /** Its address as the job master sees it (`host:port` of the control connection). */
  readonly remote: string;
  readonly node: string;
  readonly state: RegistrationState;
}

export type RegistrationState = 'loading' | 'ready' | 'assigned' | 'gone';

interface Entry {
  readonly name: string;
  readonly registration: TaskManagerRegistration;
  readonly remote: string;
  readonly node: string;
  state: RegistrationState;
  readonly framed: FramedSocket;
  /** Set once assigned: what its connection's close reports to. */
  closed: ((error: Error) => void) | null;
}

/** The task managers of one pool: control links by index, and the registrations they belong to. */
export interface AssignedPool {
  readonly pool: number;
  readonly members: readonly Registration[];
  readonly links: ReadonlyArray<Link<ToTaskManager, ToJobMaster>>;
  /** Called once per member whose connection closes (not after `release`). */
  onLost(handler: (index: number, error: Error) => void): void;
  /** Closes every member's connection (they register again); idempotent. */
  release(): void;
}

export class TaskManagerRegistry {
  private readonly entries: Entry[] = [];
  private readonly waiters = new Set<() => void>();
  private pools = 0;
  private joined = 0;
  /** The last refusal of a task manager that could not run the job, to explain a shortage. */
  lastRefusal: Error | null = null;

  private constructor(
    private readonly settings: RegistrySettings,
    private listener: PeerListener | null,
  ) {}

  /** Listens at the settings' address. @throws ConfigError (TLS required), ClusterError (the address cannot be bound). */
  static async open(settings: RegistrySettings): Promise<TaskManagerRegistry> {
    const registry = new TaskManagerRegistry(settings, null);
    registry.listener = await listenPeers({
      ...settings,
      admit: (hello) => registry.admit(hello),
      onPeer: (framed, hello, remote) => registry.accepted(framed, hello, remote),
      onRefused: (remote, reason) => settings.log(`task manager at ${remote} refused: ${reason}`),
    });
    return registry;
  }

  /** The bound address (the port is the real one when 0 was asked for). */
  get address(): { readonly host: string; readonly port: number } {
    const l = this.listener!;
    return { host: l.host, port: l.port };
  }

  /** Every task manager that joined and is not gone. */
  get registered(): readonly Registration[] {
    return this.entries.filter((e) => e.state !== 'gone').map(view);
  }

  /** The ready ones, in the order they joined. */
  get ready(): readonly Registration[] {
    return this.entries.filter((e) => e.state === 'ready').map(view);
  }

  /** Calls `changed` whenever a task manager joins, becomes ready or leaves; returns the unsubscribe. */
  watch(changed: () => void): () => void {
    this.waiters.add(changed);
    return () => this.waiters.delete(changed);
  }

  /**
   * Puts the named ready task managers into a new pool: each is told its index and its peers' data
   * addresses, and its connection carries the attempt protocol from now on.
   */
  assign(names: readonly string[]): AssignedPool {
    const pool = ++this.pools;
    const members = names.map((name) => {
      const e = this.entries.find((x) => x.name === name);
      if (e === undefined || e.state !== 'ready') throw new Error(`task manager ${name} is not ready to be assigned`);
      return e;
    });
    const peers: PeerAddress[] = members.map((e, index) => ({ index, host: e.registration.dataHost, port: e.registration.dataPort }));
    let lost: ((index: number, error: Error) => void) | null = null;
    const early: Array<[number, Error]> = [];
    let released = false;
    const links = members.map((e, index) => {
      e.state = 'assigned';
      e.framed.write(encodeSessionMessage({ type: 'assign', pool, index, peers: peers.filter((p) => p.index !== index) }));
      e.closed = (error) => {
        if (released) return;
        if (lost) lost(index, error);
        else early.push([index, error]);
      };
      // The registry keeps the connection's one close handler (it reports the loss through onLost).
      const link = socketLink<ToTaskManager, ToJobMaster>(e.framed);
      return { send: link.send, onMessage: link.onMessage, close: link.close };
    });
    this.changed();
    return {
      pool,
      members: members.map(view),
      links,
      onLost: (handler) => {
        lost = handler;
        for (const [i, e] of early.splice(0)) handler(i, e);
      },
      release: () => {
        if (released) return;
        released = true;
        for (const link of links) link.close();
      },
    };
  }

  /** Stops accepting and closes every connection. */
  async close(): Promise<void> {
    const l = this.listener;
    this.listener = null;
    for (const e of this.entries) e.framed.close();
    await l?.close();
  }

  private admit(hello: PeerHello): { welcome: Record<string, unknown> } | { refuse: string } {
    if (hello.role !== 'control') return { refuse: `a ${hello.role} connection reached the job master; data connections go to task managers` };
    if (hello.weirVersion !== this.settings.weirVersion)
      return { refuse: `it runs Weir ${hello.weirVersion}, the job master runs Weir ${this.settings.weirVersion}: run the same release on every host` };
    const problem = registrationProblem(hello.body);
    if (problem !== null) return { refuse: problem };
    const welcome: JoinWelcome = { registration: `tm-${this.joined + 1}`, job: this.settings.job };
    return { welcome: welcome as unknown as Record<string, unknown> };
  }

  private accepted(framed: FramedSocket, hello: PeerHello, remote: string): void {
    const given = hello.body as unknown as TaskManagerRegistration;
    // A task manager that names no data host is reached where its control connection comes from.
    const registration: TaskManagerRegistration = given.dataHost === '' ? { ...given, dataHost: hostOfAddress(remote) } : given;
    const entry: Entry = { name: `tm-${++this.joined}`, registration, remote, node: hello.node, state: 'loading', framed, closed: null };
    this.entries.push(entry);
    const who = `task manager ${entry.name} (${registration.host}, pid ${registration.pid}, ${remote})`;
    framed.onClose((error) => {
      const was = entry.state;
      entry.state = 'gone';
      const lost = new ClusterError('CLUSTER_CONNECTION_LOST', who, `its connection closed${error ? `: ${error.message}` : ''}`, { cause: error });
      if (was === 'assigned') entry.closed?.(lost);
      else if (was === 'ready') this.settings.log(`${who} left`);
      this.changed();
    });
    framed.onFrame((bytes) => {
      let m: FromJoiningTaskManager;
      try {
        m = decodeSessionMessage<FromJoiningTaskManager>(bytes, who);
      } catch (err) {
        framed.close(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      switch (m.type) {
        case 'fetch-code':
          if (this.settings.codeBytes === null)
            framed.close(new Error(`${who} asked for the job's code, which this job master does not ship (same path on every host)`));
          else framed.write(encodeSessionMessage({ type: 'code', bytes: this.settings.codeBytes }));
          return;
        case 'ready':
          if (entry.state !== 'loading') return;
          entry.state = 'ready';
          this.settings.log(`${who} joined with ${registration.slots} slot${registration.slots === 1 ? '' : 's'}`);
          this.changed();
          return;
        case 'load-failed': {
          const error = fromWireError(m.error);
          this.lastRefusal = error instanceof WeirError ? error : new ClusterError('CLUSTER_REFUSED', who, error.message, { cause: error });
          this.settings.log(`${who} cannot run this job: ${error.message}`);
          framed.close();
          return;
        }
      }
    });
  }

  private changed(): void {
    for (const w of [...this.waiters]) w();
  }
}

function view(e: Entry): Registration {
  return { name: e.name, registration: e.registration, remote: e.remote, node: e.node, state: e.state };
}

/** Why a control hello's body is no registration, or null. */
function registrationProblem(body: Readonly<Record<string, unknown>>): string | null {
  const { slots, dataHost, dataPort, host, pid } = body;
  if (typeof slots !== 'number' || !Number.isInteger(slots) || slots < 1) return `its registration offers ${String(slots)} slots; at least 1 is needed`;
  if (typeof dataHost !== 'string') return 'its registration has no data host';
  if (typeof dataPort !== 'number' || !Number.isInteger(dataPort) || dataPort < 1 || dataPort > 65535)
    return `its registration has data port ${String(dataPort)}`;
  if (typeof host !== 'string' || typeof pid !== 'number') return 'its registration does not name its host and pid';
  return null;
}
