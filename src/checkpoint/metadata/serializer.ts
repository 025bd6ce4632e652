/**
 * The versioned `_metadata` serializer, as Flink's MetadataV1..Vn serializers: the writer writes the
 * oldest version that can express the checkpoint (3 only when it holds in-flight data, numbered by
 * branching chains; 2 only when it holds a byte range of a shared file), so a checkpoint that
 * needs nothing new stays readable by an older Weir; there is one reader per version ever
 * released, kept forever. File paths inside are relative to the directory holding `_metadata`, so
 * a snapshot directory whose files all live inside it can be copied anywhere and still read.
 */
import { Packr } from 'msgpackr';
import { StorageError } from '../../core/errors.ts';
import { decodeEnvelope, encodeEnvelope } from '../../storage/file-format.ts';
import { parentDir } from '../../storage/paths.ts';
import type { CheckpointMetadata } from './metadata.ts';
import { readMetadataV1, writeMetadataV1 } from './metadata-v1.ts';
import { needsMetadataV2, readMetadataV2, writeMetadataV2 } from './metadata-v2.ts';
import { needsMetadataV3, readMetadataV3, writeMetadataV3 } from './metadata-v3.ts';
import { streamHandlesOf } from './walk.ts';

/** Reads one version's decoded body into the current in-memory shape. */
type MetadataReader = (body: unknown, metadataDir: string, file: string) => CheckpointMetadata;

/** Every released format version and its reader. Add a version; never edit or remove one. */
const READERS: ReadonlyMap<number, MetadataReader> = new Map([
  [1, readMetadataV1],
  [2, readMetadataV2],
  [3, readMetadataV3],
]);

/** The newest version `serializeMetadata` writes (for a checkpoint that needs it). */
export const METADATA_FORMAT_VERSION = 3;

export const SUPPORTED_METADATA_VERSIONS: readonly number[] = [...READERS.keys()];

// Plain msgpack (no msgpackr records or extensions) so the body is readable by any msgpack tool.
const packr = new Packr({ useRecords: false, moreTypes: false, structuredClone: false, bundleStrings: false });

/** The format version `serializeMetadata` writes `meta` in. */
export function metadataVersionFor(meta: CheckpointMetadata): number {
  if (needsMetadataV3(meta)) return 3;
  return needsMetadataV2(streamHandlesOf(meta)) ? 2 : 1;
}

/** Encodes `meta` in the oldest format that holds it (see above); file paths are made relative to `metadataDir`. */
export function serializeMetadata(meta: CheckpointMetadata, metadataDir: string): Uint8Array {
  const version = metadataVersionFor(meta);
  const write = version === 3 ? writeMetadataV3 : version === 2 ? writeMetadataV2 : writeMetadataV1;
  const body = packr.pack(write(meta, metadataDir));
  return encodeEnvelope('metadata', version, body);
}

/**
 * Decodes and verifies a `_metadata` file read from `metadataPath`; file paths inside are resolved
 * against its directory. Any problem is a StorageError naming `metadataPath`.
 */
export function deserializeMetadata(bytes: Uint8Array, metadataPath: string): CheckpointMetadata {
  const { version, body } = decodeEnvelope('metadata', bytes, metadataPath, SUPPORTED_METADATA_VERSIONS);
  const reader = READERS.get(version);
  if (reader === undefined) {
    throw new StorageError('UNSUPPORTED_VERSION', metadataPath, `format version ${version} has no reader`);
  }
  let decoded: unknown;
  try {
    decoded = packr.unpack(body);
  } catch (err) {
    throw new StorageError('CORRUPT_FILE', metadataPath, `metadata body does not decode: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  return reader(decoded, parentDir(metadataPath), metadataPath);
}
