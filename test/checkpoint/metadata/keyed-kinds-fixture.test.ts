/**
 * Metadata format 1 stays byte for byte what it was for every keyed state handle kind: the stored
 * fixture (test/fixtures/metadata/keyed-kinds-v1, written by commit 975ca0b) reads back into the
 * checkpoint it was written from, and that checkpoint serializes to the same bytes; the window
 * savepoint fixture (full keyed handles written by a real job) round-trips to its own bytes too.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { deserializeMetadata, serializeMetadata } from '../../../src/checkpoint/metadata/serializer.ts';
import { metadataPath } from '../../../src/storage/paths.ts';
import { KEYED_KINDS_DIR, keyedKindsMetadata } from '../../fixtures/metadata/keyed-kinds.ts';

const fixture = (rel: string): string => fileURLToPath(new URL(`../../fixtures/${rel}`, import.meta.url));

describe('metadata format 1 for every keyed handle kind, against stored fixtures', () => {
  const stored = readFileSync(fixture('metadata/keyed-kinds-v1/_metadata'));

  it('writes the fixture checkpoint to the stored bytes', () => {
    expect(Buffer.from(serializeMetadata(keyedKindsMetadata(), KEYED_KINDS_DIR)).equals(stored)).toBe(true);
  });

  it('reads the stored bytes back into the fixture checkpoint, paths resolved against its directory', () => {
    const meta = deserializeMetadata(stored, metadataPath(KEYED_KINDS_DIR));
    expect(meta).toEqual(keyedKindsMetadata());
    const [full, chain] = meta.operators;
    expect(Object.keys(full!.subtasks[0]!.keyed[0]!.keyCounts)).toEqual(['count', '__proto__']);
    expect(chain!.subtasks[0]!.keyed[0]).toMatchObject({ type: 'incremental-key-groups', knownCompletedCheckpointId: 6 });
  });

  it('a savepoint a job wrote (full keyed handles) reads and writes back to its own bytes', () => {
    const dir = fixture('savepoints/windows-0.1/savepoint');
    const bytes = readFileSync(metadataPath(dir));
    const meta = deserializeMetadata(bytes, metadataPath(dir));
    expect(meta.operators.some((op) => op.subtasks.some((s) => s.keyed.some((k) => k.type === 'key-groups')))).toBe(true);
    expect(Buffer.from(serializeMetadata(meta, path.resolve(dir))).equals(bytes)).toBe(true);
  });
});
