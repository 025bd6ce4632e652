/**
 * The versioned `_metadata` serializer, as Flink's MetadataV1..Vn serializers: the writer always
 * writes the latest version; there is one reader per version ever released, kept forever. File
 * paths inside are relative to the directory holding `_metadata`, so a snapshot directory whose
 * files all live inside it can be copied anywhere and still read.
 */
import { Packr } from 'msgpackr';
import { StorageError } from '../../core/errors.ts';
import { decodeEnvelope, encodeEnvelope } from '../../storage/file-format.ts';
import { parentDir } from '../../storage/paths.ts';
import type { CheckpointMetadata } from './metadata.ts';
import { readMetadataV1, writeMetadataV1 } from './metadata-v1.ts';

/** Reads one version's decoded body into the current in-memory shape. */
type MetadataReader = (body: unknown, metadataDir: string, file: string) => CheckpointMetadata;

/** Every released format version and its reader. Add a version; never edit or remove one. */
const READERS: ReadonlyMap<number, MetadataReader> = new Map([[1, readMetadataV1]]);

/** The version `serializeMetadata` writes. */
export const METADATA_FORMAT_VERSION = 1;
const writeLatest = writeMetadataV1;

export const SUPPORTED_METADATA_VERSIONS: readonly number[] = [...READERS.keys()];

// Plain msgpack (no msgpackr records or extensions) so the body is readable by any msgpack tool.
const packr = new Packr({ useRecords: false, moreTypes: false, structuredClone: false, bundleStrings: false });

/** Encodes `meta` in the latest format; file paths are made relative to `metadataDir`. */
export function serializeMetadata(meta: CheckpointMetadata, metadataDir: string): Uint8Array {
  const body = packr.pack(writeLatest(meta, metadataDir));
  return encodeEnvelope('metadata', METADATA_FORMAT_VERSION, body);
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
