/**
 * Skewed keys for benchmarks: a fixed vocabulary of distinct strings and a Zipf distribution over
 * it, sampled in O(1) with Walker's alias table (Vose's construction). Everything is derived from a
 * seed through `uniformAt`, so record i has the same key in every variant, process and run.
 */
import { uniformAt } from '../../src/index.ts';

/** Salt for vocabulary letters, so words never correlate with the record draws (salt 0). */
const WORD_SALT = 0x5eed;
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/**
 * `size` distinct word-like strings of 4..11 characters. The base-36 rank suffix makes them
 * distinct; the random prefix makes their hashes (and so key groups) unrelated to their rank.
 */
export function buildVocabulary(size: number, seed: number): string[] {
  const words: string[] = new Array(size);
  for (let i = 0; i < size; i++) {
    const length = 2 + Math.floor(uniformAt(seed, i, WORD_SALT) * 6);
    let word = '';
    for (let c = 0; c < length; c++) word += LETTERS[Math.floor(uniformAt(seed, i, WORD_SALT + 1 + c) * 26)];
    words[i] = `${word}-${i.toString(36)}`;
  }
  if (new Set(words).size !== size) throw new Error('vocabulary words are not distinct');
  return words;
}

/** Zipf weights 1/(rank+1)^s, normalised to sum to 1 (rank 0 is the most frequent). */
export function zipfWeights(size: number, s: number): Float64Array {
  const weights = new Float64Array(size);
  let total = 0;
  for (let r = 0; r < size; r++) total += weights[r] = 1 / Math.pow(r + 1, s);
  for (let r = 0; r < size; r++) weights[r]! /= total;
  return weights;
}

/** Walker's alias table: one uniform draw picks a column and decides between it and its alias. */
export class AliasTable {
  private readonly prob: Float64Array;
  private readonly alias: Int32Array;
  readonly size: number;

  constructor(weights: Float64Array) {
    const n = weights.length;
    this.size = n;
    this.prob = new Float64Array(n);
    this.alias = new Int32Array(n);
    const scaled = Float64Array.from(weights, (w) => w * n);
    const small: number[] = [];
    const large: number[] = [];
    for (let i = 0; i < n; i++) (scaled[i]! < 1 ? small : large).push(i);
    while (small.length > 0 && large.length > 0) {
      const s = small.pop()!;
      const l = large.pop()!;
      this.prob[s] = scaled[s]!;
      this.alias[s] = l;
      scaled[l] = scaled[l]! + scaled[s]! - 1;
      (scaled[l]! < 1 ? small : large).push(l);
    }
    // What is left is 1 up to rounding error.
    for (const i of [...large, ...small]) {
      this.prob[i] = 1;
      this.alias[i] = i;
    }
  }

  /** The index for a uniform u in [0, 1). */
  sample(u: number): number {
    const x = u * this.size;
    const column = x | 0;
    return x - column < this.prob[column]! ? column : this.alias[column]!;
  }
}

/** The record function shared by every variant: record i's key. */
export type KeyAt = (index: number, seed: number) => string;

export function zipfKeys(vocabularySize: number, s: number, vocabularySeed: number): { vocabulary: string[]; keyAt: KeyAt } {
  const vocabulary = buildVocabulary(vocabularySize, vocabularySeed);
  const table = new AliasTable(zipfWeights(vocabularySize, s));
  const keyAt: KeyAt = (index, seed) => vocabulary[table.sample(uniformAt(seed, index))]!;
  return { vocabulary, keyAt };
}
