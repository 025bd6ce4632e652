/**
 * What a keyed state file holds, per state and key group, without restoring it: the figures of
 * `weir savepoint inspect`. Reads the full layout and an increment's delta layout alike (a delta
 * section carries its deletions as a third element, which is not counted).
 */
import { StorageError } from '../../core/errors.ts';
import type { StreamStateHandle } from '../../storage/handles.ts';
import type { StateReader } from '../backend.ts';
import { decodeValue, encodeValue } from '../codec.ts';
import { KEYED_DELTA_STREAM_VERSION } from './keyed-sections.ts';
import { KEYED_STREAM_VERSION, readStreamHeader, sectionBytes, streamName } from './stream-format.ts';

/** One state's data in one key group of a file: the state's kind and the encoded size of its entries. */
export interface KeyedSectionFigure {
  readonly name: string;
  readonly kind: string;
  readonly bytes: number;
}

/** The figures of every state in every key group `offsets` names in `stream`. */
export async function inspectKeyedFile(
  stream: StreamStateHandle,
  offsets: ReadonlyArray<readonly [number, number, number]>,
  read: StateReader,
): Promise<KeyedSectionFigure[]> {
  const label = streamName(stream);
  const bytes = await read(stream);
  readStreamHeader(bytes, 'keyed', [KEYED_STREAM_VERSION, KEYED_DELTA_STREAM_VERSION], label);
  const out: KeyedSectionFigure[] = [];
  for (const [keyGroup, offset, length] of offsets) {
    const corrupt = (what: string) => new StorageError('CORRUPT_FILE', label, `key group ${keyGroup}: ${what}`);
    let decoded: unknown;
    try {
      decoded = decodeValue(sectionBytes(bytes, offset, length, label));
    } catch (err) {
      if (err instanceof StorageError) throw err;
      throw corrupt('undecodable section');
    }
    if (!Array.isArray(decoded) || decoded[0] !== keyGroup || typeof decoded[1] !== 'object' || decoded[1] === null)
      throw corrupt('section header does not match the offsets');
    for (const [name, stored] of Object.entries(decoded[1] as Record<string, unknown>)) {
      if (!Array.isArray(stored) || typeof stored[0] !== 'string' || !Array.isArray(stored[1])) throw corrupt(`state "${name}" is malformed`);
      out.push({ name, kind: stored[0], bytes: encodeValue(stored[1]).byteLength });
    }
  }
  return out;
}
