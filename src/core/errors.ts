/**
 * Typed errors for operating errors (bad input, missing or corrupt files, failed jobs). Each has a
 * stable `code` and an optional `cause`; messages name the thing at fault (option, file, uid).
 */
/** The stable codes of Weir's errors: test `err.code`, not the message. */
export type WeirErrorCode =
  | 'INVALID_OPTION'
  | 'INVALID_JOB'
  | 'CORRUPT_FILE'
  | 'MISSING_FILE'
  | 'UNSUPPORTED_VERSION'
  | 'STORAGE_IO'
  | 'STORAGE_UNREACHABLE'
  | 'RESTORE_FAILED'
  | 'CHECKPOINT_FAILED'
  | 'JOB_FAILED'
  | 'JOB_CANCELLED'
  | 'INJECTED_FAULT'
  | 'CORRUPT_FRAME'
  | 'CONNECTOR_UNREACHABLE'
  | 'CONNECTOR_FAILED'
  | 'SOURCE_CANNOT_REWIND'
  | 'CLUSTER_UNREACHABLE'
  | 'CLUSTER_REFUSED'
  | 'CLUSTER_CONNECTION_LOST'
  | 'CLUSTER_SLOT_SHORTAGE'
  | 'HA_UNREACHABLE'
  | 'HA_LEADERSHIP_LOST'
  | 'HA_JOB_ENDED'
  | 'HA_JOB_MISMATCH';

/**
 * Codes of failures that come back on every retry of the same restore: the restart strategy does
 * not retry them. Decided by code, so it holds for an error wrapped with its task's name or
 * carried across threads (both keep the code).
 */
const NOT_RETRYABLE: ReadonlySet<WeirErrorCode> = new Set<WeirErrorCode>(['SOURCE_CANNOT_REWIND', 'HA_LEADERSHIP_LOST']);

/** The base of every error Weir throws for an operating problem; `cause` holds the underlying error. */
export class WeirError extends Error {
  /** What kind of problem it is. */
  readonly code: WeirErrorCode;
  /**
   * Creates the error.
   * @param options.cause the error that led to this one.
   */
  constructor(code: WeirErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** An option or argument a user gave is invalid; `option` names it. */
export class ConfigError extends WeirError {
  /** The option at fault, as a path (`checkpointing.intervalMs`). */
  readonly option: string;
  /**
   * Creates the error.
   * @param option the option at fault.
   * @param message what is wrong with it (prefixed with the option).
   */
  constructor(option: string, message: string) {
    super('INVALID_OPTION', `${option}: ${message}`);
    this.option = option;
  }
}

/** The job definition is invalid (missing uid, bad graph, bad module). */
export class JobDefinitionError extends WeirError {
  /**
   * Creates the error.
   * @param message what is wrong, naming the operator or uid.
   */
  constructor(message: string, options?: { cause?: unknown }) {
    super('INVALID_JOB', message, options);
  }
}

/** The codes a StorageError carries. */
export type StorageErrorCode = 'CORRUPT_FILE' | 'MISSING_FILE' | 'UNSUPPORTED_VERSION' | 'STORAGE_IO' | 'STORAGE_UNREACHABLE';

/** A persisted file could not be read or is not what was written; `file` names it. */
export class StorageError extends WeirError {
  declare readonly code: StorageErrorCode;
  /** The file at fault. */
  readonly file: string;
  /**
   * Creates the error.
   * @param file the file at fault.
   * @param message what is wrong with it (prefixed with the file).
   */
  constructor(code: StorageErrorCode, file: string, message: string, options?: { cause?: unknown }) {
    super(code, `${file}: ${message}`, options);
    this.file = file;
  }
}

/** Restoring a job from a snapshot failed; nothing of the job was left running. */
export class RestoreError extends WeirError {
  /**
   * Creates the error.
   * @param message what could not be restored and why.
   */
  constructor(message: string, options?: { cause?: unknown }) {
    super('RESTORE_FAILED', message, options);
  }
}

/** The job failed for good: restarts were exhausted or not allowed. */
export class JobFailedError extends WeirError {
  /**
   * Creates the error.
   * @param message why the job failed; `cause` is the last task failure.
   */
  constructor(message: string, options?: { cause?: unknown }) {
    super('JOB_FAILED', message, options);
  }
}

/** An external system a connector talks to is unreachable or refused an operation; `system` names it and its address. */
export class ConnectorError extends WeirError {
  /** The system and its address, never credentials (`PostgreSQL at 127.0.0.1:5432, database test, user root`). */
  readonly system: string;
  /**
   * Creates the error.
   * @param system the system and address at fault (prefixed to the message).
   * @param message what went wrong.
   */
  constructor(code: 'CONNECTOR_UNREACHABLE' | 'CONNECTOR_FAILED', system: string, message: string, options?: { cause?: unknown }) {
    super(code, `${system}: ${message}`, options);
    this.system = system;
  }
}

/**
 * A source cannot go back to the position the restored checkpoint holds (the external system no
 * longer has what lies between), so no retry of this restore can succeed: the job fails at once.
 * The message says why and names the way out.
 */
export class SourceRewindError extends WeirError {
  /**
   * Creates the error.
   * @param message the source, why it cannot rewind, and what the user can do.
   */
  constructor(message: string, options?: { cause?: unknown }) {
    super('SOURCE_CANNOT_REWIND', message, options);
  }
}

/** Whether a retry of the failed attempt can succeed: false for an error (or a cause of it) whose code says it would come back. */
export function isRetryable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NOT_RETRYABLE.has(code as WeirErrorCode)) return false;
  }
  return true;
}

/** A fault deliberately injected by a test or the simulator. */
export class InjectedFault extends WeirError {
  /** Where it was injected. */
  readonly site: string;
  /**
   * Creates the error.
   * @param site where it is injected (in messages).
   */
  constructor(site: string) {
    super('INJECTED_FAULT', `injected fault at ${site}`);
    this.site = site;
  }
}

/**
 * Bytes on a link that are not a message of this protocol: another magic byte (not a Weir message
 * at all) or another protocol version (a peer of another release). Names what was found and what
 * was expected.
 */
export class ProtocolError extends WeirError {
  /** Which header byte did not match. */
  readonly field: 'magic' | 'version' | 'body';
  /** The byte found (null: the bytes ended before it). */
  readonly found: number | null;
  /** The byte this build expects. */
  readonly expected: number | null;
  /**
   * Creates the error.
   * @param message what was wrong, naming found and expected.
   */
  constructor(field: 'magic' | 'version' | 'body', found: number | null, expected: number | null, message: string, options?: { cause?: unknown }) {
    super('CORRUPT_FRAME', message, options);
    this.field = field;
    this.found = found;
    this.expected = expected;
  }
}

/** The message of anything thrown. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** `message` on one line: its line breaks as ` | ` (a log line, an error a task manager sends). */
export function oneLine(message: string): string {
  return message.replace(/\s*\n\s*/g, ' | ').trim();
}

/**
 * A job master or task manager over the network: `CLUSTER_UNREACHABLE` (no connection to `peer`,
 * or the handshake did not finish in time), `CLUSTER_REFUSED` (the peer refused the handshake or
 * the registration: a wrong token, another protocol or Weir version, another job module; the
 * message says which), `CLUSTER_CONNECTION_LOST` (an established connection closed or broke),
 * `CLUSTER_SLOT_SHORTAGE` (not enough task manager slots registered in time). `peer` names the
 * address (`host:port`) or the task manager.
 */
export class ClusterError extends WeirError {
  /** The address or task manager at the other end. */
  readonly peer: string;
  /**
   * Creates the error.
   * @param peer the address (`host:port`) or task manager at fault (prefixed to the message).
   * @param message what went wrong.
   */
  constructor(
    code: 'CLUSTER_UNREACHABLE' | 'CLUSTER_REFUSED' | 'CLUSTER_CONNECTION_LOST' | 'CLUSTER_SLOT_SHORTAGE',
    peer: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, `${peer}: ${message}`, options);
    this.peer = peer;
  }
}

/**
 * A high-availability store could not be reached (`HA_UNREACHABLE`), this job master lost its
 * leadership (`HA_LEADERSHIP_LOST`: its lease expired or another leader took over; it commits
 * nothing more and ends), or the job it was to lead has ended (`HA_JOB_ENDED`: its last leader
 * finished it, so there is nothing to take over), or this job master built another job graph than the
 * one the HA store records for the job (`HA_JOB_MISMATCH`: it neither stands by nor takes over).
 */
export class HaError extends WeirError {
  /**
   * Creates the error.
   * @param message what went wrong, naming the store (without credentials) or the job.
   */
  constructor(code: 'HA_UNREACHABLE' | 'HA_LEADERSHIP_LOST' | 'HA_JOB_ENDED' | 'HA_JOB_MISMATCH', message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
