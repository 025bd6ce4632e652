/**
 * The job's side of a task manager process that joined over TCP (`weir taskmanager`): where the
 * job module comes from and how the job is built there. A shipped module (the job master bundled
 * it) is fetched once, checked against its content hash and kept in the code cache by hash; a
 * module at the same path on every host is bundled here the same way and refused when its hash
 * differs from the job master's (a module whose functions differ would build the same graph and
 * pass the fingerprint check). The job is then built as in a worker thread
 * (`task-manager-worker-job.ts`), with the options the job master sent as data.
 */
import { ClusterError } from '../core/errors.ts';
import { hashOfLocalModule, materializeJobCode } from '../cluster/job-code/code-cache.ts';
import { registerJobCodeResolution } from '../cluster/job-code/resolve-hook.ts';
import type { JobRunner } from '../cluster/tcp/task-manager-process.ts';
import { prepareTaskManagerJob } from './task-manager-worker-job.ts';

export function remoteJobRunner(cacheDir: string): JobRunner {
  registerJobCodeResolution(cacheDir);
  return {
    moduleOf: async (job, fetch, who) => {
      const code = job.code;
      if (code.kind === 'bundle') return materializeJobCode({ name: code.name, hash: code.hash, bytes: await fetch() }, cacheDir);
      const local = await hashOfLocalModule(code.path);
      if (local !== code.hash)
        throw new ClusterError(
          'CLUSTER_REFUSED',
          who,
          `job module ${code.path} differs from the job master's (hash ${local.slice(0, 12)} here, ${code.hash.slice(0, 12)} there): run the same file on every host, or let the job master ship it`,
        );
      return code.path;
    },
    prepare: (job, modulePath, who) => prepareTaskManagerJob({ ...job, modulePath }, who),
  };
}
