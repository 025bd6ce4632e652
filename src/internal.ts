/**
 * Weir's internal entry: what the simulator (src/sim), the CLI and the tests need beyond the public
 * API of src/index.ts. Not part of the package's API: its .d.ts is stripped and it may change in
 * any release.
 * @internal
 */
export type { InternalRunOptions } from './api/environment.ts';
export type { ExecutionHooks, JobMaster } from './cluster/job-master/job-master.ts';
