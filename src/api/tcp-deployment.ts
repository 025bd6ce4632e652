/**
 * A job's attempts on task manager processes that join over TCP ({@link RunOptions.listen}): the
 * job master checks what cannot work across hosts (memory checkpoint storage, an in-process sink, a
 * FileSink directory it cannot reach itself), plants a probe in each directory every host must share
 * (the checkpoint directory, FileSink directories; task managers check them: `shared-dirs.ts`),
 * gets the job's code ready to ship (bundled and hashed) or hashes the module for the same-path
 * check, listens for task managers, and deploys each attempt on the registered ones.
 */
import { isAbsolute, resolve } from 'node:path';
import { ConfigError } from '../core/errors.ts';
import { packageVersion } from '../core/package-version.ts';
import type { Environment } from '../core/time.ts';
import type { JobId } from '../core/ids.ts';
import type { Deployer } from '../cluster/job-master/attempt-deployment.ts';
import { remoteDeployer, type TaskManagerWatch } from '../cluster/job-master/remote-deployment.ts';
import { tcpTaskManagers } from '../cluster/launchers/tcp-task-managers.ts';
import { bundleJobModule } from '../cluster/job-code/bundle.ts';
import { hashOfLocalModule } from '../cluster/job-code/code-cache.ts';
import type { JobCodeRef, JobSubmission } from '../cluster/tcp/session-messages.ts';
import { TaskManagerRegistry } from '../cluster/tcp/task-manager-registry.ts';
import { CollectSink } from '../connectors/collect/collect-sink.ts';
import { FileSink } from '../connectors/files/file-sink.ts';
import { plantSharedDirProbes, removeSharedDirProbes } from '../cluster/tcp/shared-dirs.ts';
import { stuckLimitMs } from '../cluster/tcp/stuck-thread-watchdog.ts';
import { FsCheckpointStorage } from '../storage/fs-storage.ts';
import { checkWritableDir } from '../storage/writable-dir.ts';
import type { JobGraph } from '../graph/job-graph.ts';
import { MemoryCheckpointStorage } from '../storage/memory-storage.ts';
import type { CheckpointStorage } from '../storage/storage.ts';
import type { ClusterListenOptions } from './environment.ts';

/** Milliseconds a connection has to finish its handshake. */
const HANDSHAKE_TIMEOUT_MS = 10_000;
/** Default of `registrationTimeoutMs`. */
const REGISTRATION_TIMEOUT_MS = 60_000;
const MIN_TOKEN_LENGTH = 16;

export interface TcpJob {
  readonly jobId: JobId;
  readonly graph: JobGraph;
  readonly modulePath: string | null;
  /** The options as given: they travel to every task manager as data. */
  readonly options: Readonly<Record<string, unknown>>;
  readonly storage: CheckpointStorage;
  readonly allowNonRestoredState: boolean;
  readonly elementsPerStep: number;
  readonly sourceBatchRecords: number;
}

/** @throws ConfigError naming `listen.*`, `checkpointStorage` or the sink, when the job cannot run on task managers elsewhere. */
export async function tcpDeployer(
  listen: ClusterListenOptions,
  job: TcpJob,
  env: Environment,
  watch: TaskManagerWatch,
  log: (line: string) => void,
): Promise<Deployer> {
  if (job.modulePath === null)
    throw new ConfigError('listen', 'task managers that join over TCP build the job from its module: run a job module (weir run <module>, or setJobModule)');
  if (!Number.isInteger(listen.taskManagers) || listen.taskManagers < 1)
    throw new ConfigError('listen.taskManagers', `must be an integer >= 1, got ${listen.taskManagers}`);
  if (listen.token.length < MIN_TOKEN_LENGTH) throw new ConfigError('listen.token', `the cluster token must have at least ${MIN_TOKEN_LENGTH} characters`);
  if (job.storage instanceof MemoryCheckpointStorage)
    throw new ConfigError(
      'checkpointStorage',
      "'memory' checkpoint storage lives in the job master's process, where task managers on other hosts cannot write: give a directory every host sees or an s3:// bucket (--checkpoint-dir)",
    );
  const inProcess = job.graph.vertices.flatMap((v) => v.chain.filter((n) => n.sink instanceof CollectSink).map((n) => n.name));
  if (inProcess.length > 0)
    throw new ConfigError('listen', `sink ${inProcess.join(', ')} keeps its output in this process's memory, which task managers elsewhere cannot reach`);
  // The job master reads a FileSink's directory for the sink-aware recovery rule (what it committed,
  // roll-backs): it must reach it, as every task manager must.
  const fileSinks = job.graph.vertices.flatMap((v) => v.chain.flatMap((n) => (n.sink instanceof FileSink ? [{ name: n.name, dir: n.sink.directory }] : [])));
  for (const f of fileSinks) checkWritableDir(f.dir, { option: 'FileSink.directory', what: `directory of FileSink '${f.name}'`, create: true });
  const shared = [
    ...(job.storage instanceof FsCheckpointStorage ? [{ what: 'checkpoint directory', dir: job.storage.jobDir }] : []),
    ...fileSinks.map((f) => ({ what: `directory of FileSink '${f.name}'`, dir: f.dir })),
  ];
  const modulePath = isAbsolute(job.modulePath) ? job.modulePath : resolve(job.modulePath);
  let code: JobCodeRef;
  let codeBytes: Uint8Array | null = null;
  if ((listen.code ?? 'ship') === 'ship') {
    const bundle = await bundleJobModule(modulePath);
    code = { kind: 'bundle', name: bundle.name, hash: bundle.hash, size: bundle.bytes.byteLength };
    codeBytes = bundle.bytes;
  } else {
    code = { kind: 'path', path: modulePath, hash: await hashOfLocalModule(modulePath) };
  }
  const submission: JobSubmission = {
    jobId: job.jobId,
    code,
    options: job.options,
    allowNonRestoredState: job.allowNonRestoredState,
    elementsPerStep: job.elementsPerStep,
    sourceBatchRecords: job.sourceBatchRecords,
    sharedDirs: plantSharedDirProbes(shared, job.jobId),
    stuckLimitMs: stuckLimitMs(watch),
    jobMasterSilenceMs: watch.heartbeat.timeoutMs,
  };
  const registry = await TaskManagerRegistry.open({
    host: listen.host,
    port: listen.port,
    token: listen.token,
    tls: listen.tls ?? null,
    insecure: listen.insecure ?? false,
    handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
    weirVersion: packageVersion(),
    job: submission,
    codeBytes,
    log,
  }).catch((err: unknown) => {
    removeSharedDirProbes(submission.sharedDirs);
    throw err;
  });
  listen.onListening?.(registry.address);
  const slotsNeeded = Math.max(1, ...job.graph.vertices.map((v) => v.parallelism));
  const tcp = tcpTaskManagers(registry, env, {
    expected: listen.taskManagers,
    slotsNeeded,
    registrationTimeoutMs: listen.registrationTimeoutMs ?? REGISTRATION_TIMEOUT_MS,
    settleMs: watch.heartbeat.intervalMs,
    log,
  });
  const deployer = remoteDeployer(tcp.launch, tcp.place, env, watch);
  const inner = deployer.dispose;
  deployer.dispose = () => {
    inner?.();
    void registry.close();
    removeSharedDirProbes(submission.sharedDirs);
  };
  return deployer;
}
