/**
 * Writes and reads channel state: the in-flight buffers of an unaligned checkpoint, one stream per
 * channel that held any, each buffer kept whole with its key groups and timestamps, and the
 * watermarks between buffers in their place, so replay is exact.
 */
import type { CheckpointStreamFactory } from '../../storage/storage.ts';
import { streamSize } from '../../storage/handles.ts';
import { decodeValue, encodeValue } from '../../state/codec.ts';
import { StorageError } from '../../core/errors.ts';
import type { InflightElement } from './buffer.ts';
import type { ChannelStateHandle } from '../metadata/metadata.ts';
import type { InflightLog } from './inflight-log.ts';

/**
 * Format v1 (read only): a list of `[records, keyGroups | null]`, data buffers only.
 * Format v2 (written): `{ v: 2, e: [...] }`, elements in channel order, each
 * `['b', records, keyGroups | null, timestamps | null]`, `['w', watermarkMs]` or `['s', idle]`.
 */
type WireElement = ['b', unknown[], number[] | null, number[] | null] | ['w', number] | ['s', boolean];

function encodeElements(elements: readonly InflightElement[]): Uint8Array {
  const e: WireElement[] = elements.map((x): WireElement => {
    switch (x.kind) {
      case 'buffer':
        return ['b', x.records, x.keyGroups ? Array.from(x.keyGroups) : null, x.timestamps ? Array.from(x.timestamps) : null];
      case 'watermark':
        return ['w', x.timestampMs];
      default:
        return ['s', x.idle];
    }
  });
  return encodeValue({ v: 2, e });
}

function decodeV1(wire: unknown[], what: string): InflightElement[] {
  return wire.map((w) => {
    if (!Array.isArray(w) || w.length !== 2 || !Array.isArray(w[0])) throw new StorageError('CORRUPT_FILE', what, 'malformed buffer in channel state');
    const kgs = w[1] as number[] | null;
    return { kind: 'buffer' as const, records: w[0] as unknown[], keyGroups: kgs ? Int32Array.from(kgs) : null, timestamps: null };
  });
}

function decodeV2(wire: unknown[], what: string): InflightElement[] {
  const bad = (why: string) => new StorageError('CORRUPT_FILE', what, `malformed element in channel state: ${why}`);
  return wire.map((w): InflightElement => {
    if (!Array.isArray(w)) throw bad('not a list');
    switch (w[0]) {
      case 'b': {
        if (w.length !== 4 || !Array.isArray(w[1])) throw bad('buffer');
        const records = w[1] as unknown[];
        const kgs = w[2] as number[] | null;
        const ts = w[3] as number[] | null;
        if ((kgs !== null && kgs.length !== records.length) || (ts !== null && ts.length !== records.length)) throw bad('buffer columns differ in length');
        return { kind: 'buffer', records, keyGroups: kgs ? Int32Array.from(kgs) : null, timestamps: ts ? Float64Array.from(ts) : null };
      }
      case 'w':
        if (w.length !== 2 || typeof w[1] !== 'number') throw bad('watermark');
        return { kind: 'watermark', timestampMs: w[1] };
      case 's':
        if (w.length !== 2 || typeof w[1] !== 'boolean') throw bad('watermark status');
        return { kind: 'watermark-status', idle: w[1] };
      default:
        throw bad(`unknown tag ${JSON.stringify(w[0])}`);
    }
  });
}

/** Reads channel state of any format version: its buffers and watermarks in channel order. */
export function decodeBuffers(bytes: Uint8Array, what: string): InflightElement[] {
  const wire = decodeValue(bytes);
  if (Array.isArray(wire)) return decodeV1(wire, what);
  if (wire !== null && typeof wire === 'object' && (wire as { v?: unknown }).v === 2 && Array.isArray((wire as { e?: unknown }).e)) {
    return decodeV2((wire as { e: unknown[] }).e, what);
  }
  throw new StorageError('CORRUPT_FILE', what, 'channel state is neither format v1 nor v2');
}

/** Persists the log; returns the handles and the bytes written. */
export async function writeChannelState(
  log: InflightLog,
  streams: CheckpointStreamFactory,
  task: string,
): Promise<{ handles: ChannelStateHandle[]; bytes: number }> {
  const handles: ChannelStateHandle[] = [];
  let bytes = 0;
  const put = async (direction: 'input' | 'output', gate: number, channel: number, buffers: InflightElement[]) => {
    if (buffers.length === 0) return;
    const stream = await streams.write('exclusive', `channel-${direction}-${task}-${gate}-${channel}`, encodeElements(buffers));
    bytes += streamSize(stream);
    handles.push({ direction, gate, channel, stream, buffers: buffers.length });
  };
  for (let ch = 0; ch < log.input.length; ch++) await put('input', 0, ch, log.input[ch]!);
  for (const o of log.output) await put('output', o.gate, o.channel, o.buffers);
  return { handles, bytes };
}
