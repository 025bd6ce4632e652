/**
 * An order-free digest of a Nexmark query's results, the same in a task manager's sink
 * (nexmark-tcp-job.ts) and in the plain reference (nexmark-stream-reference.ts): the number of
 * results and the sum of a 32-bit FNV-1a hash of each result's fields. Equal digests mean equal
 * multisets of results, up to hash collisions. The sum stays exact below 2^21 results.
 */

export type DigestedQuery = 'q5' | 'q8';

export interface Digest {
  readonly results: number;
  readonly hashSum: number;
}

/** The fields of a q5 result ({auction, num, starttime}) or a q8 result ({id, name, starttime}), in a fixed order. */
export function canonical(query: DigestedQuery, r: Readonly<Record<string, unknown>>): string {
  return query === 'q5' ? `${r.auction}|${r.num}|${r.starttime}` : `${r.id}|${r.name}|${r.starttime}`;
}

export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Accumulates a digest one result at a time. */
export class DigestBuilder {
  results = 0;
  hashSum = 0;

  constructor(private readonly query: DigestedQuery) {}

  add(r: Readonly<Record<string, unknown>>): void {
    this.results++;
    this.hashSum += fnv1a(canonical(this.query, r));
  }

  get digest(): Digest {
    return { results: this.results, hashSum: this.hashSum };
  }
}

export function sameDigest(a: Digest, b: Digest): boolean {
  return a.results === b.results && a.hashSum === b.hashSum;
}

export function addDigests(parts: readonly Digest[]): Digest {
  return { results: parts.reduce((n, d) => n + d.results, 0), hashSum: parts.reduce((n, d) => n + d.hashSum, 0) };
}
