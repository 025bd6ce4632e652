/**
 * What a task manager's job graph must agree on with the job master's: vertex by vertex, name,
 * parallelism and operator uids. Every task manager builds the graph from the job module itself;
 * a module that builds something else in another thread (randomness, thread-dependent choices)
 * would restore state into the wrong operators, so the mismatch is named and the job fails.
 */
import { JobFailedError } from '../../core/errors.ts';
import type { JobGraph } from '../../graph/job-graph.ts';
import type { GraphFingerprint } from '../transport/protocol.ts';

export function fingerprintOf(graph: JobGraph): GraphFingerprint {
  return { vertices: graph.vertices.map((v) => ({ name: v.name, parallelism: v.parallelism, uids: v.chain.map((n) => n.uid) })) };
}

/**
 * The first difference between the graph `own` describes and `expected` (`other` names the owner of
 * `expected` in the text, e.g. "the job master"), or null when they agree.
 */
export function graphDifference(own: GraphFingerprint, expected: GraphFingerprint, other: string): string | null {
  if (own.vertices.length !== expected.vertices.length) return `${own.vertices.length} vertices, ${other} has ${expected.vertices.length}`;
  for (let i = 0; i < expected.vertices.length; i++) {
    const e = expected.vertices[i]!;
    const o = own.vertices[i]!;
    const missing = e.uids.find((uid) => !o.uids.includes(uid));
    if (missing !== undefined) return `uid '${missing}' (vertex ${i}, '${e.name}') is missing; that vertex has uids ${o.uids.map((u) => `'${u}'`).join(', ')}`;
    const extra = o.uids.find((uid) => !e.uids.includes(uid));
    if (extra !== undefined) return `uid '${extra}' (vertex ${i}, '${o.name}') is unknown to ${other}`;
    if (o.parallelism !== e.parallelism) return `vertex ${i} ('${e.name}') has parallelism ${o.parallelism}, ${other}'s ${e.parallelism}`;
  }
  return null;
}

/** Throws a JobFailedError naming the first difference; `where` says who built `graph`. */
export function checkFingerprint(graph: JobGraph, expected: GraphFingerprint, where: string): void {
  const difference = graphDifference(fingerprintOf(graph), expected, 'the job master');
  if (difference !== null) {
    throw new JobFailedError(
      `${where} built a different job graph than the job master: ${difference}; a job module must build the same graph in every task manager (no randomness or thread-dependent choices in uids, names or parallelism)`,
    );
  }
}
