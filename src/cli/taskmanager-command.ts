/**
 * `weir taskmanager --connect <host:port>`: a task manager process that joins a job master over TCP
 * and runs the subtasks it is given, until SIGINT/SIGTERM or the job master is gone (with
 * `--retry`: until a job master answers again). Exit 0 when stopped or the job master ended, 1 when
 * the job master refused it (the error says what differs: token, version, job module).
 */
import { openHaStore } from '../cluster/ha/open-ha-store.ts';
import { availableParallelism } from 'node:os';
import { errorMessage } from '../core/errors.ts';
import { packageVersion } from '../core/package-version.ts';
import { defaultJobCodeCacheDir } from '../cluster/job-code/code-cache.ts';
import { runTaskManagerProcess, type ProcessEnd } from '../cluster/tcp/task-manager-process.ts';
import { remoteJobRunner } from '../api/remote-task-manager-job.ts';
import { clusterToken, parseAddress, tlsOf, type ClusterFlags } from './cluster-flags.ts';
import { EXIT_JOB_FAILED, EXIT_OK, UsageError } from './exit.ts';

export interface TaskManagerFlags extends ClusterFlags {
  /** The job master's address; or, with `ha`, found in the HA store. */
  readonly connect?: string;
  /** High availability: the HA store (PostgreSQL URL) naming the leader of `haJob`; the process follows each new leader. */
  readonly ha?: string;
  readonly haJob?: string;
  readonly slots?: number;
  readonly dataHost?: string;
  readonly dataPort?: number;
  readonly bind?: string;
  readonly retry?: boolean;
  readonly cacheDir?: string;
  readonly quiet?: boolean;
}

export async function taskManagerCommand(flags: TaskManagerFlags): Promise<number> {
  if ((flags.connect === undefined) === (flags.ha === undefined))
    throw new UsageError('give either --connect <host:port> (a job master) or --ha <url> with --ha-job <name> (the leader the HA store names)');
  if (flags.ha !== undefined && flags.haJob === undefined) throw new UsageError('--ha needs --ha-job <name>: the job whose leader to join');
  const leader = flags.ha === undefined ? null : await leaderResolver(flags.ha, flags.haJob!);
  const { host, port } = flags.connect !== undefined ? parseAddress(flags.connect, '--connect') : leader!.placeholder;
  const { token } = clusterToken(flags, false);
  const log = (line: string) => {
    if (flags.quiet !== true) process.stderr.write(`taskmanager ${process.pid}: ${line}\n`);
  };
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const onSignal = () => {
    log('stopping');
    stop();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const end: ProcessEnd = await runTaskManagerProcess(
      {
        host,
        port,
        token,
        tls: tlsOf(flags),
        insecure: flags.insecure === true,
        slots: flags.slots ?? availableParallelism(),
        dataHost: flags.dataHost ?? null,
        dataPort: flags.dataPort ?? 0,
        dataBind: flags.bind ?? null,
        retry: flags.retry === true,
        ...(leader === null ? {} : { resolve: leader.resolve }),
        retryIntervalMs: 1000,
        connectTimeoutMs: 10_000,
        weirVersion: packageVersion(),
        log,
      },
      remoteJobRunner(flags.cacheDir ?? defaultJobCodeCacheDir()),
      stopped,
    );
    switch (end.kind) {
      case 'stopped':
        return EXIT_OK;
      case 'job-master-gone':
        log(`the job master at ${end.address} is gone; exiting (--retry waits for a new one)`);
        return EXIT_OK;
      case 'refused':
        process.stderr.write(`weir: taskmanager: ${errorMessage(end.error)}\n`);
        return EXIT_JOB_FAILED;
      default: {
        const unknown: never = end;
        return unknown;
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    void leader?.close();
  }
}

/**
 * The leader of `job` as the HA store names it, asked before every dial: a task manager follows
 * the job from leader to leader. `placeholder` stands for the job master's address where one is
 * needed before any is known (the HA store's host: loopback or not decides where the data listener binds).
 */
interface LeaderResolver {
  readonly placeholder: { readonly host: string; readonly port: number };
  resolve(): Promise<{ readonly host: string; readonly port: number; readonly label: string } | null>;
  close(): Promise<void>;
}

async function leaderResolver(url: string, job: string): Promise<LeaderResolver> {
  const store = await openHaStore(url);
  let storeHost = '0.0.0.0';
  try {
    storeHost = new URL(url).hostname || storeHost;
  } catch {
    // the store opened, so the URL parsed there; keep the default
  }
  return {
    placeholder: { host: storeHost, port: 0 },
    resolve: async () => {
      const l = await store.leader(job);
      if (l === null || !l.live || l.address === null) return null;
      return { ...parseAddress(l.address, `the address job '${job}' announced`), label: `${l.holder} (epoch ${l.epoch})` };
    },
    close: () => store.close(),
  };
}
