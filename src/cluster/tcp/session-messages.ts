/**
 * A task manager's control connection between the handshake and the attempt protocol: the job
 * master has welcomed it (with the job it runs), the task manager fetches the job's code if it does
 * not hold it, builds the job and says it is ready; later the job master assigns it a place in a pool
 * (its index and its peers' data addresses). From the assignment on, the connection carries the
 * attempt protocol (`protocol.ts`, through `message-codec.ts`) until it closes.
 *
 * Layout of a session frame: 'W' 'S' (0x57 0x53), then msgpack of the message. A protocol message
 * starts 'W' and the protocol version (1), a handshake frame 'W' 'J', so none can be taken for another.
 */
import { Packr } from 'msgpackr';
import { ProtocolError } from '../../core/errors.ts';
import type { WireError } from '../transport/protocol.ts';
import type { TaskManagerJobData } from '../task-manager/task-manager-context.ts';
import type { SharedDirProbe } from './shared-dirs.ts';

/** Where a task manager gets the job's code: shipped by the job master (bundled, content-hashed), or its own file at the same path, checked by hash. */
export type JobCodeRef =
  | { readonly kind: 'bundle'; readonly name: string; readonly hash: string; readonly size: number }
  | { readonly kind: 'path'; readonly path: string; readonly hash: string };

/** What a task manager needs to build the job (plain data: options travel as data). */
export interface JobSubmission extends TaskManagerJobData {
  readonly code: JobCodeRef;
  /** Directories this host must see as the job master does (checkpoints, FileSink output): probes it checks before it builds the job. */
  readonly sharedDirs: readonly SharedDirProbe[];
  /** Milliseconds its thread may stand still while it serves the job before its own watchdog ends the process (`stuck-thread-watchdog.ts`). */
  readonly stuckLimitMs: number;
  /**
   * Milliseconds a task manager serving a pool may hear nothing from its job master (which sends a
   * heartbeat every `heartbeat.intervalMs`) before it treats the job master as gone: one cut off by
   * the network closes nothing. The job master's own limit for its task managers,
   * `heartbeat.timeoutMs`.
   */
  readonly jobMasterSilenceMs: number;
}

/** What a task manager says about itself when it joins (the handshake's hello body of a control connection). */
export interface TaskManagerRegistration {
  /** Slots it offers (subtask i of every vertex shares slot i). */
  readonly slots: number;
  /** Where its peers reach its data listener. */
  readonly dataHost: string;
  readonly dataPort: number;
  /** Its host name and process id, for people reading the dashboard. */
  readonly host: string;
  readonly pid: number;
}

/** The job master's welcome to a task manager (the handshake's welcome body). */
export interface JoinWelcome {
  /** Its registration's name at this job master (`tm-3`). */
  readonly registration: string;
  readonly job: JobSubmission;
}

/** A peer's data address, by its index in the pool. */
export interface PeerAddress {
  readonly index: number;
  readonly host: string;
  readonly port: number;
}

/** Job master -> task manager, before the attempt protocol. */
export type ToJoiningTaskManager =
  | { readonly type: 'code'; readonly bytes: Uint8Array }
  /** Its place in pool `pool`: from here on the connection carries the attempt protocol. */
  | { readonly type: 'assign'; readonly pool: number; readonly index: number; readonly peers: readonly PeerAddress[] };

/** Task manager -> job master, before the attempt protocol. */
export type FromJoiningTaskManager =
  | { readonly type: 'fetch-code' }
  /** It built the job and waits for an assignment. */
  | { readonly type: 'ready' }
  /** It cannot run this job (its code differs, or the job does not build there); the job master refuses it. */
  | { readonly type: 'load-failed'; readonly error: WireError };

/** What the body of a data connection's hello says: who dials, for which pool. */
export interface DataHello {
  readonly pool: number;
  readonly from: number;
}

const PREFIX_0 = 0x57;
const PREFIX_1 = 0x53;
const packr = new Packr({ useRecords: false, copyBuffers: true });

export function encodeSessionMessage(message: ToJoiningTaskManager | FromJoiningTaskManager): Uint8Array {
  const body = packr.pack(message);
  const bytes = new Uint8Array(body.length + 2);
  bytes[0] = PREFIX_0;
  bytes[1] = PREFIX_1;
  bytes.set(body, 2);
  return bytes;
}

/** @throws ProtocolError (CORRUPT_FRAME) for bytes that are no session message. */
export function decodeSessionMessage<T extends ToJoiningTaskManager | FromJoiningTaskManager>(bytes: Uint8Array, from: string): T {
  if (bytes.length < 3 || bytes[0] !== PREFIX_0 || bytes[1] !== PREFIX_1)
    throw new ProtocolError('magic', bytes[1] ?? null, PREFIX_1, `${from}: a session message was expected before the attempt protocol (prefix 'WS')`);
  let message: unknown;
  try {
    message = packr.unpack(bytes.subarray(2));
  } catch (err) {
    throw new ProtocolError('body', null, null, `${from}: session message of ${bytes.length} bytes does not decode`, { cause: err });
  }
  if (typeof message !== 'object' || message === null || typeof (message as { type?: unknown }).type !== 'string')
    throw new ProtocolError('body', null, null, `${from}: session message without a type`);
  return message as T;
}
