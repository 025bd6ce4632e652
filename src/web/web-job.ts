/** The job a web server shows: its job master (figures), its client (actions) and its rate sampler. */
import type { JobClient } from '../api/environment.ts';
import type { JobMaster } from '../cluster/job-master/job-master.ts';
import type { RateSampler } from './rate-sampler.ts';

export interface WebJob {
  readonly master: JobMaster;
  readonly client: JobClient;
  readonly sampler: RateSampler;
  /** Wall-clock ms now. */
  now(): number;
}

/** A vertex's id in the REST API: its index in the job graph, as a string. */
export const vertexId = (index: number): string => String(index);
