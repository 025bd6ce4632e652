/**
 * Savepoints and stop-with-savepoint through the REST API, asynchronous as in Flink: the POST
 * answers at once with a request id, `GET /jobs/:id/savepoints/:requestId` tells how it went.
 * Kept for the life of the server (a few per run).
 */
import * as path from 'node:path';
import { errorMessage } from '../../core/errors.ts';
import { resolveStorageLocation } from '../../storage/location.ts';
import { isUrlPath } from '../../storage/paths.ts';
import type { WebJob } from '../web-job.ts';
import { HttpError, NotFound } from './errors.ts';
import type { SavepointStatus, SavepointTriggered } from './responses.ts';

type Operation = { status: 'IN_PROGRESS' } | { status: 'COMPLETED'; location: string } | { status: 'FAILED'; message: string };

/** Operations kept; the oldest finished ones are forgotten past this. */
const OPERATIONS_KEPT = 100;

export class SavepointOperations {
  private readonly operations = new Map<string, Operation>();
  private next = 1;

  constructor(
    private readonly job: WebJob,
    /** Called with the savepoint a stop ended the job with (`weir run` prints how to resume from it). */
    private readonly onStopped: (location: string) => void,
  ) {}

  /** `POST /jobs/:id/savepoints {"target-directory", "cancel-job"?}` */
  trigger(body: Record<string, unknown>): SavepointTriggered {
    const dir = targetDirectory(body, 'target-directory');
    const cancel = body['cancel-job'] ?? false;
    if (typeof cancel !== 'boolean') throw new HttpError(400, "'cancel-job' must be true or false");
    this.ensureRunning(cancel ? 'cancel it with a savepoint' : 'take a savepoint');
    const { client } = this.job;
    return this.start(cancel ? client.cancelWithSavepoint(dir) : client.savepoint(dir));
  }

  /** `POST /jobs/:id/stop {"targetDirectory"}` */
  stop(body: Record<string, unknown>): SavepointTriggered {
    const dir = targetDirectory(body, 'targetDirectory');
    if (body.drain !== undefined && body.drain !== false) throw new HttpError(400, "'drain' is not supported: sources stop at the savepoint's barrier");
    this.ensureRunning('stop it with a savepoint');
    return this.start(
      this.job.client.stopWithSavepoint(dir).then((location) => {
        this.onStopped(location);
        return location;
      }),
    );
  }

  /** `GET /jobs/:id/savepoints/:requestId` */
  status(requestId: string): SavepointStatus {
    const op = this.operations.get(requestId);
    if (op === undefined) throw new NotFound(`no savepoint request '${requestId}'`);
    if (op.status === 'IN_PROGRESS') return { status: { id: 'IN_PROGRESS' } };
    if (op.status === 'COMPLETED') return { status: { id: 'COMPLETED' }, operation: { location: op.location } };
    return { status: { id: 'COMPLETED' }, operation: { 'failure-cause': { class: 'CheckpointFailedError', 'stack-trace': op.message } } };
  }

  private start(work: Promise<string>): SavepointTriggered {
    const id = `sp-${this.next++}`;
    this.operations.set(id, { status: 'IN_PROGRESS' });
    work.then(
      (location) => this.operations.set(id, { status: 'COMPLETED', location }),
      (err: unknown) => this.operations.set(id, { status: 'FAILED', message: errorMessage(err) }),
    );
    if (this.operations.size > OPERATIONS_KEPT) {
      const oldest = [...this.operations].find(([, o]) => o.status !== 'IN_PROGRESS');
      if (oldest) this.operations.delete(oldest[0]);
    }
    return { 'request-id': id };
  }

  private ensureRunning(what: string): void {
    const status = this.job.master.metrics().status;
    if (status === 'FINISHED' || status === 'FAILED' || status === 'CANCELED') {
      throw new HttpError(409, `job ${this.job.master.config.jobId} has ended (${status}); cannot ${what}`);
    }
  }
}

/** The savepoint directory of a request: absolute, because this process's cwd is not the caller's. */
function targetDirectory(body: Record<string, unknown>, field: string): string {
  const dir = body[field];
  if (typeof dir !== 'string' || dir.length === 0)
    throw new HttpError(400, `'${field}' (the savepoint directory, an absolute path or a storage URL) is required`);
  if (isUrlPath(dir)) {
    try {
      return resolveStorageLocation(dir, field);
    } catch (err) {
      throw new HttpError(400, errorMessage(err));
    }
  }
  if (!path.isAbsolute(dir) && !dir.startsWith('memory:')) throw new HttpError(400, `'${field}' must be an absolute path, got '${dir}'`);
  return path.isAbsolute(dir) ? path.normalize(dir) : dir;
}
