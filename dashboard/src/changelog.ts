/**
 * The State log tab, for jobs on the changelog state backend (`GET /jobs/:id/changelog`): per
 * vertex and subtask, the log's bytes pending, in flight and uploaded (over every attempt), the
 * uploads and their retries, and the newest materialization's age and size. Its link shows only
 * when some vertex uses the backend.
 */
import { type ChangelogFiguresAnswer, getJson, type JobChangelog } from './api.ts';
import { bytes, count, el, table } from './dom.ts';

const age = (ms: number | null): string => (ms === null ? 'none yet' : ms < 10_000 ? `${count(ms)} ms` : `${count(Math.round(ms / 1000))} s`);

function row(who: string, f: ChangelogFiguresAnswer): string[] {
  return [
    who,
    bytes(f['pending-bytes']),
    bytes(f['in-flight-bytes']),
    bytes(f['uploaded-bytes']),
    `${count(f.uploads)} (${count(f['upload-retries'])} retried, ${count(f['upload-failures'])} failed)`,
    `${count(f.materializations)}${f['materialization-failures'] > 0 ? ` (${count(f['materialization-failures'])} failed)` : ''}`,
    age(f['materialization-age-ms']),
    bytes(f['materialized-bytes']),
    count(f.truncations),
  ];
}

const HEAD = ['subtask', 'pending', 'in flight', 'uploaded', 'uploads', 'materializations', 'newest materialization', 'its size', 'segments let go'];

/** Fetches and shows the job's changelog figures in `root`; resolves whether the job uses the backend at all. */
export async function renderChangelog(root: HTMLElement, jid: string): Promise<boolean> {
  let c: JobChangelog;
  try {
    c = await getJson<JobChangelog>(`/jobs/${jid}/changelog`);
  } catch (err) {
    root.replaceChildren(el('h2', {}, 'State log'), el('p', { class: 'error' }, `No figures: ${(err as Error).message}`));
    return true;
  }
  root.replaceChildren(
    el('h2', {}, 'State log (changelog backend)'),
    ...c.vertices.flatMap((v) => [
      el('h3', {}, `${v.name} (${v.id})`),
      table(HEAD, [...v.subtasks.map((s) => row(String(s.subtask), s)), row('all', v.totals)], { id: `changelog-${v.id}`, class: 'changelog' }),
    ]),
  );
  return c.vertices.length > 0;
}
