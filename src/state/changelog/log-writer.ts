/**
 * The per-subtask log buffer: changes are encoded as they happen into one growing, reused byte
 * buffer (no await, no per-change array), and `seal` cuts what accumulated into a checksummed
 * batch (`log-format.ts`).
 */
import { assert } from '../../core/assert.ts';
import { encodeValue } from '../codec.ts';
import type { StateKind } from '../descriptors.ts';
import type { Key } from '../key-groups.ts';
import { BATCH_HEADER_BYTES, HAS_MAP_KEY, HAS_VALUE, KIND_CODES, OP_CODES, writeBatchHeader, type ChangeOp, type LoggedState } from './log-format.ts';

const INITIAL_BYTES = 64 * 1024;

/** A sealed batch: its bytes and the changes [fromSeq, toSeq) it holds. */
export interface SealedBatch {
  readonly bytes: Uint8Array;
  readonly fromSeq: number;
  readonly toSeq: number;
}

/** Encodes changes of one subtask's keyed state into batches. */
export class ChangelogWriter {
  private buffer = new Uint8Array(INITIAL_BYTES);
  private view = new DataView(this.buffer.buffer);
  private length = 0;
  private readonly states: LoggedState[] = [];
  private readonly stateIndex = new Map<string, number>();
  /** Sequence number of the next change. */
  private seq: number;
  /** Sequence number of the first change not yet sealed. */
  private sealedTo: number;

  constructor(firstSeq = 0) {
    this.seq = firstSeq;
    this.sealedTo = firstSeq;
  }

  /** The sequence number the next change gets: every change before it is in the log. */
  get nextSeq(): number {
    return this.seq;
  }

  /** Bytes of changes not sealed yet. */
  get pendingBytes(): number {
    return this.length;
  }

  /** The index of a state in the name table, registering it on first use. */
  stateId(name: string, kind: StateKind): number {
    const id = this.stateIndex.get(name);
    if (id !== undefined) return id;
    assert(this.states.length < 0xffff, 'more than 65535 states in one changelog');
    this.states.push({ name, kind });
    this.stateIndex.set(name, this.states.length - 1);
    return this.states.length - 1;
  }

  /** Appends one change (the record path: encodes into the buffer, allocates only what msgpack does). */
  append(op: ChangeOp, stateId: number, keyGroup: number, key: Key, value: unknown, mapKey: unknown): void {
    this.reserve(5);
    this.buffer[this.length] = OP_CODES[op];
    this.view.setUint16(this.length + 1, stateId, true);
    this.view.setUint16(this.length + 3, keyGroup, true);
    this.length += 5;
    this.writeValue(key);
    if (HAS_VALUE[op]) this.writeValue(value);
    if (HAS_MAP_KEY[op]) this.writeValue(mapKey);
    this.seq++;
  }

  private writeValue(value: unknown): void {
    const bytes = encodeValue(value);
    this.reserve(4 + bytes.byteLength);
    this.view.setUint32(this.length, bytes.byteLength, true);
    this.buffer.set(bytes, this.length + 4);
    this.length += 4 + bytes.byteLength;
  }

  private reserve(n: number): void {
    if (this.length + n <= this.buffer.byteLength) return;
    let size = this.buffer.byteLength * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buffer.subarray(0, this.length));
    this.buffer = next;
    this.view = new DataView(next.buffer);
  }

  /** Cuts the changes since the last seal into a batch; null when there are none. */
  seal(): SealedBatch | null {
    const fromSeq = this.sealedTo;
    const toSeq = this.seq;
    if (toSeq === fromSeq) return null;
    const text = new TextEncoder();
    const names = this.states.map((s) => text.encode(s.name));
    let tableBytes = 0;
    for (const n of names) tableBytes += 3 + n.byteLength;
    const body = new Uint8Array(14 + tableBytes + this.length);
    const view = new DataView(body.buffer);
    view.setFloat64(0, fromSeq, true);
    view.setUint32(8, toSeq - fromSeq, true);
    view.setUint16(12, names.length, true);
    let at = 14;
    names.forEach((n, i) => {
      body[at] = KIND_CODES[this.states[i]!.kind];
      view.setUint16(at + 1, n.byteLength, true);
      body.set(n, at + 3);
      at += 3 + n.byteLength;
    });
    body.set(this.buffer.subarray(0, this.length), at);
    const bytes = new Uint8Array(BATCH_HEADER_BYTES + body.byteLength);
    writeBatchHeader(bytes, body);
    bytes.set(body, BATCH_HEADER_BYTES);
    this.length = 0;
    this.sealedTo = toSeq;
    return { bytes, fromSeq, toSeq };
  }
}
