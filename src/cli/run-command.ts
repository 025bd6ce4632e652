/**
 * `weir run <job-module>`: loads a job module, applies the flags, runs the job to its end with a
 * control endpoint (`weir savepoint`, `weir stop`, `weir cancel` reach it), then calls the module's
 * `onFinished` if the job FINISHED.
 */
import { wallTimer } from '../core/adapters.ts';
import type { Cancellable } from '../core/time.ts';
import { StreamEnvironment, type CheckpointingOptions, type StreamEnvironmentOptions } from '../index.ts';
import { errorMessage } from '../core/errors.ts';
import { resolveStorageLocation, resolveStorageRoot } from '../storage/location.ts';
import { EXIT_CANCELED, EXIT_JOB_FAILED, EXIT_OK, UsageError, isUsageError } from './exit.ts';
import { oneLine } from './format.ts';
import { keepAdvisorFigures } from './advisor-figures.ts';
import { loadJobModule, type JobFinishedContext, type LoadedJobModule } from '../api/load-job-module.ts';
import { ensureRegistryDir } from './registry-dir.ts';
import { openRunControl, type RunControl } from './run-control.ts';
import type { JobMaster } from '../internal.ts';
import type { TaskManagerCount } from '../cluster/launchers/task-manager-count.ts';
import { failureLine, finalStatusLine, superviseJob } from './supervise.ts';
import { bindWebPort, webPortChoice } from './web-port.ts';
import type { WebListener } from '../web/server.ts';
import type { ClusterListenOptions } from '../api/environment.ts';
import { clusterToken, parseAddress, tlsOf, type ClusterFlags } from './cluster-flags.ts';
import { startLocalTaskManagers, type LocalTaskManagers } from './local-task-managers.ts';
import { formatAddress } from '../cluster/transport/address.ts';
import { becomeCliLeader, cliHaSettings, leaderRole, type HaFlags } from './ha-run.ts';
import { StandbyEntry } from './standby-entry.ts';
import { publishingLeader } from '../api/ha-earlier-leaders.ts';
import { ownSubmission } from '../api/ha-execute.ts';
import type { HaLeader } from '../cluster/ha/ha-leader.ts';

export interface RunFlags extends ClusterFlags, HaFlags {
  /** Accept task manager processes (`weir taskmanager --connect`) at this host:port instead of starting worker threads. */
  readonly listen?: string;
  /** Start this many task manager processes on this host (`weir taskmanager` children). */
  readonly taskManagerProcesses?: number;
  /** Milliseconds a deploy waits for task managers to register. */
  readonly registrationTimeout?: number;
  /** Task managers load the job module at the same path instead of getting it shipped (checked by hash). */
  readonly samePath?: boolean;
  readonly parallelism?: number;
  readonly checkpointDir?: string;
  readonly checkpointInterval?: number;
  /** Task managers (worker threads) the subtasks run in. */
  readonly taskManagers?: number;
  /** Every subtask in this thread (`taskManagers: 'in-thread'`): a stuck user function then blocks cancel and the REST API. */
  readonly inThread?: boolean;
  /** Slots per task manager. */
  readonly slotsPerTaskManager?: number;
  readonly from?: string;
  readonly allowNonRestoredState?: boolean;
  /** Take ownership of the `--from` checkpoint (no-claim by default). */
  readonly claim?: boolean;
  /** Restore even where a sink would commit output a second time. */
  readonly acceptDuplicates?: boolean;
  readonly quiet?: boolean;
  /** The web server's port (else WEIR_WEB_PORT, else an ephemeral port). */
  readonly webPort?: number;
  /** The address the web server binds (default 127.0.0.1; 0.0.0.0 for a Kubernetes probe). */
  readonly webHost?: string;
}

/** Module options with the flags applied on top (flags win). */
export function mergeOptions(module: StreamEnvironmentOptions, flags: RunFlags): StreamEnvironmentOptions {
  const merged: StreamEnvironmentOptions = { ...module };
  const moduleCheckpointing = module.checkpointing;
  const checkpointing: CheckpointingOptions = typeof moduleCheckpointing === 'object' && moduleCheckpointing !== null ? { ...moduleCheckpointing } : {};
  let touched = false;
  if (flags.parallelism !== undefined) merged.parallelism = flags.parallelism;
  // With --listen or --task-manager-processes, --task-managers counts processes, not worker threads.
  if (flags.taskManagers !== undefined && flags.listen === undefined && flags.taskManagerProcesses === undefined) merged.taskManagers = flags.taskManagers;
  if (flags.inThread === true) merged.taskManagers = 'in-thread';
  if (flags.slotsPerTaskManager !== undefined) merged.slotsPerTaskManager = flags.slotsPerTaskManager;
  if (flags.checkpointDir !== undefined) {
    merged.checkpointStorage = flags.checkpointDir;
    // Keep the run's checkpoints after it ends, so `--from` can pick them up.
    if (checkpointing.retention === undefined) {
      checkpointing.retention = 'retain-on-cancel';
      touched = true;
    }
  }
  if (flags.checkpointInterval !== undefined) {
    checkpointing.intervalMs = flags.checkpointInterval;
    touched = true;
  }
  if (touched) merged.checkpointing = checkpointing;
  return merged;
}

/** The flags with their locations checked (a URL scheme Weir does not support is a usage error) and `file:` URLs made paths. */
function checkLocations(flags: RunFlags): RunFlags {
  return {
    ...flags,
    ...(flags.checkpointDir === undefined ? {} : { checkpointDir: resolveStorageRoot(flags.checkpointDir, '--checkpoint-dir') }),
    ...(flags.from === undefined ? {} : { from: resolveStorageLocation(flags.from, '--from') }),
  };
}

export async function runCommand(modulePath: string, given: RunFlags): Promise<number> {
  const flags = checkLocations(given);
  if (flags.claim === true && flags.from === undefined) throw new UsageError('--claim takes ownership of the checkpoint named by --from: give --from too');
  // The control endpoint's token reaches other commands only through the registry: refuse an
  // unsafe one before the job starts (UnsafeRegistryError, exit 2), as every command using it does.
  ensureRegistryDir();
  const job = await loadJobModule(modulePath);
  const options = mergeOptions(job.options, flags);
  if (flags.inThread === true && flags.taskManagers !== undefined) {
    throw new UsageError(`--in-thread runs every subtask in this thread: it cannot be given with --task-managers ${flags.taskManagers}`);
  }
  checkClusterFlags(flags);
  const env = StreamEnvironment.create(options);
  env.setJobModule(job.path);
  try {
    await job.build(env);
  } catch (err) {
    if (isUsageError(err)) throw err;
    throw new UsageError(`job module ${job.path} failed to build the job: ${oneLine(errorMessage(err))}`, { cause: err });
  }
  // Bound before the job starts: a port that is taken stops the run here, with exit 2.
  const web = await bindWebPort(webPortChoice(flags.webPort), flags.webHost);
  try {
    return await supervise(modulePath, flags, job, env, web);
  } finally {
    await web?.close();
  }
}

async function supervise(modulePath: string, flags: RunFlags, job: LoadedJobModule, env: StreamEnvironment, web: WebListener | null): Promise<number> {
  const quiet = flags.quiet === true;
  let ha: HaLeader | null = null;
  const given = cliHaSettings(flags, env.options.highAvailability, job.name);
  const haSettings = given === null ? null : { ...given, listAsStandby: { address: web?.address ?? null } };
  if (haSettings !== null) {
    const entry = new StandbyEntry(job, web?.address ?? null);
    try {
      ha = await becomeCliLeader(
        haSettings,
        await ownSubmission(env.jobGraph(), job.path),
        (line) => process.stderr.write(`${line}\n`),
        (role) => {
          if (web !== null) web.role = role;
          entry.update(role);
        },
      );
    } finally {
      entry.close();
    }
    if (ha === null) return EXIT_OK;
    if (web !== null) web.role = leaderRole(ha);
  }
  const standbysShown = ha === null || web === null ? null : showStandbys(ha, web, haSettings!.leaseMs);
  const haLeader = ha;
  const leadership = ha?.leadership;
  const started: { control?: Promise<RunControl>; master?: JobMaster; local?: LocalTaskManagers } = {};
  const listen = clusterListen(
    flags,
    env,
    (local) => (started.local = local),
    (address) =>
      void leadership?.announce(address).catch((err: unknown) => process.stderr.write(`could not announce ${address} in the HA store: ${errorMessage(err)}\n`)),
  );
  /** Set once a signal made this leader step down: the process then exits when the lease is given up. */
  let steppingDown: Promise<void> | null = null;
  const outcome = await superviseJob(
    env,
    job.name,
    {
      restoreFrom: ha?.takeOverFrom ?? flags.from,
      ...(ha === null || ha.published.length === 0 ? {} : { restorePublished: ha.published }),
      ...(haLeader === null ? {} : { leadership: publishingLeader(haLeader, env.options, (line) => process.stderr.write(`${line}\n`)) }),
      allowNonRestoredState: flags.allowNonRestoredState,
      ...(flags.claim === true ? { claim: true } : {}),
      ...(flags.acceptDuplicates === true ? { acceptDuplicates: true } : {}),
      onJobMaster: (master) => (started.master = master),
      ...(listen === null ? {} : { listen }),
    },
    {
      quiet,
      ...(haLeader === null
        ? {}
        : {
            onSignal: (signal: NodeJS.Signals, log: (line: string) => void) => {
              log(`${signal}: stepping down: the job goes on under a standby (weir cancel or weir stop end it)`);
              const code = signal === 'SIGINT' ? 130 : 143;
              steppingDown = haLeader.stepDown().finally(() => process.exit(code));
            },
          }),
      onStarted: (client, log) => {
        if (!quiet) log(describeStart(job.name, client.jobId, env, listen));
        const registered =
          haLeader === null ? {} : { ha: { role: 'leader' as const, job: haLeader.job, epoch: haLeader.leadership.epoch, store: haLeader.store } };
        started.control = openRunControl(client, { path: job.path, name: job.name, ...registered }, log, started.master ?? null, web);
      },
    },
  );
  // Stepping down, the job goes on under a standby: nothing here may report its outcome. A
  // checkpoint completing meanwhile has its publication refused (the leadership is stopped), which
  // fails the job here; before this wait that failure reached the end below and exited 1 ahead of
  // the step-down's exit code (seen once under load). The store's `finish` ends nothing then either.
  if (steppingDown !== null) await steppingDown;
  const control = started.control === undefined ? null : await started.control;
  await control?.close();
  started.local?.stop();
  standbysShown?.cancel();
  await ha?.finish();
  process.stderr.write(`${finalStatusLine(outcome)}\n`);
  if (outcome.status === 'FAILED') {
    process.stderr.write(`${failureLine(outcome.error)}\n`);
    return EXIT_JOB_FAILED;
  }
  // cancelled, stopped or finished: a resume is up to the user, so say what the sources still hold
  for (const warning of env.leftBehindBySources()) process.stderr.write(`warning: ${warning}\n`);
  if (outcome.status === 'CANCELED') return EXIT_CANCELED;
  const stoppedWithSavepoint = control?.stoppedWithSavepoint ?? null;
  if (stoppedWithSavepoint !== null) {
    const sameDir = flags.checkpointDir === undefined ? '' : ` --checkpoint-dir ${flags.checkpointDir}`;
    process.stderr.write(`stopped with savepoint ${stoppedWithSavepoint}; resume with: weir run ${modulePath}${sameDir} --from ${stoppedWithSavepoint}\n`);
  }
  keepAdvisorFigures(env, outcome.result, started.master ?? null);
  return reportFinished(job, { jobId: outcome.jobId, result: outcome.result, env, restoredFrom: flags.from ?? null, stoppedWithSavepoint });
}

/** Keeps the leader's `/ha` (and the dashboard) showing the standbys the store lists: asked at each renewal period. */
function showStandbys(ha: HaLeader, web: WebListener, leaseMs: number): { cancel(): void } {
  let stopped = false;
  const look = async (): Promise<void> => {
    const standbys = await ha.standbys();
    if (!stopped) web.role = leaderRole(ha, standbys);
  };
  let timer: Cancellable | null = null;
  const again = (): void => {
    if (stopped) return;
    void look();
    timer = wallTimer(Math.max(100, Math.round(leaseMs / 3)), again, { unref: true });
  };
  again();
  return {
    cancel: () => {
      stopped = true;
      timer?.cancel();
    },
  };
}

/** Calls the module's `onFinished`; its text goes to stdout, its error fails the run. */
async function reportFinished(job: LoadedJobModule, ctx: JobFinishedContext): Promise<number> {
  if (job.onFinished === undefined) return EXIT_OK;
  let text: string | void;
  try {
    text = await job.onFinished(ctx);
  } catch (err) {
    process.stderr.write(`weir: ${job.name}: ${oneLine(errorMessage(err))}\n`);
    return EXIT_JOB_FAILED;
  }
  if (typeof text === 'string' && text.length > 0) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  return EXIT_OK;
}

/** Usage errors of the cluster flags, before anything starts. */
function checkClusterFlags(flags: RunFlags): void {
  const tcp = flags.listen !== undefined || flags.taskManagerProcesses !== undefined;
  if (tcp && flags.inThread === true)
    throw new UsageError('--in-thread runs every subtask in this thread: it cannot be given with --listen or --task-manager-processes');
  if (!tcp) {
    for (const [flag, given] of [
      ['--token-file', flags.tokenFile],
      ['--tls-cert', flags.tlsCert],
      ['--insecure', flags.insecure],
      ['--registration-timeout', flags.registrationTimeout],
      ['--same-path', flags.samePath],
    ] as const) {
      if (given !== undefined) throw new UsageError(`${flag} belongs to task managers over TCP: give --listen <host:port> or --task-manager-processes <n> too`);
    }
  }
  if (flags.listen !== undefined) parseAddress(flags.listen, '--listen');
  if (flags.taskManagerProcesses !== undefined && flags.taskManagers !== undefined && flags.taskManagers !== flags.taskManagerProcesses) {
    throw new UsageError(
      `--task-manager-processes ${flags.taskManagerProcesses} starts that many task managers: --task-managers ${flags.taskManagers} contradicts it`,
    );
  }
}

/** The run's `listen` option from the flags (null: worker threads as before); local task manager processes start once it listens. */
function clusterListen(
  flags: RunFlags,
  env: StreamEnvironment,
  started: (local: LocalTaskManagers) => void,
  bound: (address: string) => void,
): ClusterListenOptions | null {
  const processes = flags.taskManagerProcesses;
  if (flags.listen === undefined && processes === undefined) return null;
  const address = flags.listen === undefined ? { host: '127.0.0.1', port: 0 } : parseAddress(flags.listen, '--listen');
  const { token, source } = clusterToken(flags, true);
  const tls = tlsOf(flags);
  const count = processes ?? flags.taskManagers ?? 1;
  return {
    host: address.host,
    port: address.port,
    taskManagers: count,
    token,
    ...(tls === null ? {} : { tls }),
    ...(flags.insecure === true ? { insecure: true } : {}),
    ...(flags.registrationTimeout === undefined ? {} : { registrationTimeoutMs: flags.registrationTimeout }),
    ...(flags.samePath === true ? { code: 'same-path' as const } : {}),
    onListening: (at) => {
      bound(formatAddress(at.host, at.port));
      if (processes !== undefined) {
        const slots = flags.slotsPerTaskManager ?? Math.max(env.options.parallelism, 1);
        started(startLocalTaskManagers(processes, at, slots, token, (line) => process.stderr.write(`${line}\n`)));
      } else if (flags.quiet !== true) {
        const tokenHint = source.startsWith('$') ? '' : ` --token-file ${source}`;
        process.stderr.write(
          `job master listening at ${formatAddress(at.host, at.port)}; join with: weir taskmanager --connect ${formatAddress(at.host, at.port)}${tokenHint}\n`,
        );
      }
    },
  };
}

function describeStart(name: string, jobId: string, env: StreamEnvironment, listen: ClusterListenOptions | null): string {
  const o = env.options;
  const every = o.checkpointing.intervalMs === null ? 'final checkpoint only' : `checkpoints every ${o.checkpointing.intervalMs} ms`;
  const where = o.checkpointStorage === 'memory' ? 'in memory' : `in ${o.checkpointStorage}`;
  return `running job '${name}' as ${jobId}: parallelism ${o.parallelism}, ${listen === null ? describePlacement(env.taskManagerCount()) : `on ${listen.taskManagers} task manager process${listen.taskManagers === 1 ? '' : 'es'} over TCP`}, ${every} ${where}`;
}

/**
 * Where the subtasks run, for the start line: "on 2 task managers (worker threads, one per core)",
 * "on 1 task manager (worker thread)", "in this thread (taskManagers: 'in-thread')".
 */
export function describePlacement(count: TaskManagerCount): string {
  if (count.taskManagers === 0) return `in this thread (${count.why})`;
  const why = count.why === 'taskManagers' || count.why === 'parallelism 1' ? '' : `, ${count.why}`;
  if (count.taskManagers === 1) return `on 1 task manager (worker thread${why})`;
  return `on ${count.taskManagers} task managers (worker threads${why})`;
}
