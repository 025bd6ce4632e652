/**
 * `weir taskmanager --connect <host:port>`: a task manager process that joins a job master over TCP
 * and runs the subtasks it is given, until SIGINT/SIGTERM or the job master is gone (with
 * `--retry`: until a job master answers again). Exit 0 when stopped or the job master ended, 1 when
 * the job master refused it (the error says what differs: token, version, job module).
 */
import { availableParallelism } from 'node:os';
import { errorMessage } from '../core/errors.ts';
import { packageVersion } from '../core/package-version.ts';
import { defaultJobCodeCacheDir } from '../cluster/job-code/code-cache.ts';
import { runTaskManagerProcess } from '../cluster/tcp/task-manager-process.ts';
import { remoteJobRunner } from '../api/remote-task-manager-job.ts';
import { clusterToken, parseAddress, tlsOf, type ClusterFlags } from './cluster-flags.ts';
import { EXIT_JOB_FAILED, EXIT_OK } from './exit.ts';

export interface TaskManagerFlags extends ClusterFlags {
  readonly connect: string;
  readonly slots?: number;
  readonly dataHost?: string;
  readonly dataPort?: number;
  readonly bind?: string;
  readonly retry?: boolean;
  readonly cacheDir?: string;
  readonly quiet?: boolean;
}

export async function taskManagerCommand(flags: TaskManagerFlags): Promise<number> {
  const { host, port } = parseAddress(flags.connect, '--connect');
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
    const end = await runTaskManagerProcess(
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
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
