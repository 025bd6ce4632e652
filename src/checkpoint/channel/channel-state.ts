/**
 * Writes and reads channel state: the in-flight buffers of an unaligned checkpoint, one stream per
 * channel that held any, each buffer kept whole with its key groups so replay is exact.
 */
import type { CheckpointStreamFactory } from '../../storage/storage.ts';
import { streamSize } from '../../storage/handles.ts';
import { decodeValue, encodeValue } from '../../state/codec.ts';
import { StorageError } from '../../core/errors.ts';
import type { DataBuffer } from './buffer.ts';
import type { ChannelStateHandle } from '../metadata/metadata.ts';
import type { InflightLog } from './inflight-log.ts';

type WireBuffer = [unknown[], number[] | null];

function encodeBuffers(buffers: readonly DataBuffer[]): Uint8Array {
  const wire: WireBuffer[] = buffers.map((b) => [b.records, b.keyGroups ? Array.from(b.keyGroups) : null]);
  return encodeValue(wire);
}

export function decodeBuffers(bytes: Uint8Array, what: string): DataBuffer[] {
  const wire = decodeValue(bytes);
  if (!Array.isArray(wire)) throw new StorageError('CORRUPT_FILE', what, 'channel state is not a list of buffers');
  return wire.map((w) => {
    if (!Array.isArray(w) || w.length !== 2 || !Array.isArray(w[0])) throw new StorageError('CORRUPT_FILE', what, 'malformed buffer in channel state');
    const kgs = w[1] as number[] | null;
    return { kind: 'buffer' as const, records: w[0] as unknown[], keyGroups: kgs ? Int32Array.from(kgs) : null };
  });
}

/** Persists the log; returns the handles and the bytes written. */
export async function writeChannelState(
  log: InflightLog,
  streams: CheckpointStreamFactory,
  task: string,
): Promise<{ handles: ChannelStateHandle[]; bytes: number }> {
  const handles: ChannelStateHandle[] = [];
  let bytes = 0;
  const put = async (direction: 'input' | 'output', gate: number, channel: number, buffers: DataBuffer[]) => {
    if (buffers.length === 0) return;
    const stream = await streams.write('exclusive', `channel-${direction}-${task}-${gate}-${channel}`, encodeBuffers(buffers));
    bytes += streamSize(stream);
    handles.push({ direction, gate, channel, stream, buffers: buffers.length });
  };
  for (let ch = 0; ch < log.input.length; ch++) await put('input', 0, ch, log.input[ch]!);
  for (const o of log.output) await put('output', o.gate, o.channel, o.buffers);
  return { handles, bytes };
}
