/**
 * The keyed handle registry and its two kinds: each handle finds its kind's descriptor, and each
 * descriptor answers for its handles (streams in restore order, ack figures, reuse of earlier
 * checkpoints' files, inspection). The metadata layouts are pinned byte for byte by
 * test/checkpoint/metadata/keyed-kinds-fixture.test.ts, restore by the keyed backend contract.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AssertionError } from '../../../src/core/assert.ts';
import { checkpointId } from '../../../src/core/ids.ts';
import { changelogHandleKind } from '../../../src/state/handles/changelog.ts';
import { incrementalHandleKind } from '../../../src/state/handles/incremental.ts';
import { keyGroupsHandleKind } from '../../../src/state/handles/key-groups.ts';
import {
  isKeyedHandleOf,
  keyedHandleKind,
  keyedHandleKindOfTag,
  keyedHandleSizes,
  keyedStreamsOf,
  METADATA_TAGS,
  type KeyedStateHandle,
} from '../../../src/state/handles/registry.ts';
import { keyedKindsMetadata } from '../../fixtures/metadata/keyed-kinds.ts';
import { allStates, disposeAll, embedded, fill, keys, MapStreams, setKey } from '../embedded/fixtures.ts';

afterEach(disposeAll);

const fixtureHandles = (): KeyedStateHandle[] => keyedKindsMetadata().operators.flatMap((op) => op.subtasks.flatMap((s) => s.keyed));

describe('keyed handle registry', () => {
  it('finds the descriptor of every handle by its type, and of every metadata layout by its tag', () => {
    const handles = fixtureHandles();
    expect(handles.map((h) => keyedHandleKind(h).type)).toEqual(handles.map((h) => h.type));
    expect(keyedHandleKind(handles[0]!)).toBe(keyGroupsHandleKind);
    expect(keyedHandleKind(handles.at(-1)!)).toBe(incrementalHandleKind);
    expect(METADATA_TAGS).toEqual(['incremental', 'changelog']);
    expect(keyedHandleKindOfTag('changelog')).toBe(changelogHandleKind);
    expect(keyedHandleKindOfTag(undefined)).toBe(keyGroupsHandleKind);
    expect(keyedHandleKindOfTag('incremental')).toBe(incrementalHandleKind);
    expect(isKeyedHandleOf(handles.at(-1)!, incrementalHandleKind)).toBe(true);
    expect(isKeyedHandleOf(handles[0]!, incrementalHandleKind)).toBe(false);
  });

  it('a handle of a type no kind registered is a programmer error naming the type', () => {
    const stray = { ...fixtureHandles()[0]!, type: 'log-structured' } as unknown as KeyedStateHandle;
    expect(() => keyedHandleKind(stray)).toThrow(AssertionError);
    expect(() => keyedHandleKind(stray)).toThrow(/"log-structured"/);
    expect(() => keyedHandleKindOfTag('log-structured')).toThrow(/"log-structured"/);
  });
});

describe('keyed handle kinds', () => {
  const [full, inline, empty, chain, fresh] = fixtureHandles();

  it('streams: a full handle its one stream; a chain its files, base first', () => {
    expect(keyedStreamsOf(full!)).toEqual([(full as { stream: unknown }).stream]);
    const paths = keyedStreamsOf(chain!).map((s) => (s.type === 'file' ? s.path.split('/').at(-1) : 'inline'));
    expect(paths).toEqual(['chk-4-base-chain-counter-0-aa', 'chk-5-delta-chain-counter-0-bb', 'inline']);
  });

  it("sizes: a full handle persisted what it holds; a chain persisted only its own checkpoint's files", () => {
    expect(keyedHandleSizes(full!)).toEqual({ persistedBytes: 50, stateBytes: 50 });
    expect(keyedHandleSizes(inline!)).toEqual({ persistedBytes: 17, stateBytes: 17 });
    expect(keyedHandleSizes(empty!)).toEqual({ persistedBytes: 0, stateBytes: 0 });
    expect(keyedHandleSizes(chain!)).toEqual({ persistedBytes: 16, stateBytes: 152 + 21 + 16 });
    expect(keyedHandleSizes(fresh!)).toEqual({ persistedBytes: 19, stateBytes: 19 });
  });

  it('reuse: a full handle reuses nothing; a chain reuses from the newest completed checkpoint it knew, or from any when it knew none', () => {
    const reuse = (h: KeyedStateHandle) => keyedHandleKind(h).reusesFilesFrom(h);
    expect(reuse(full!)).toBe(Infinity);
    expect(reuse(chain!)).toBe(6);
    expect(reuse(fresh!)).toBe(-Infinity);
  });

  it('inspect: per state and key group the kind and bytes of every file, base and increments alike', async () => {
    const streams = new MapStreams();
    const read = streams.read;
    const e = embedded({ cacheEntriesMax: 10 });
    fill(e, keys(40));
    const [base] = await e.snapshot(checkpointId(1), streams.factory(1)).run();
    e.notifyCheckpointComplete(checkpointId(1));
    setKey(e, 'key-3');
    allStates(e).value.update(99);
    const [delta] = await e.snapshot(checkpointId(2), streams.factory(2)).run();
    const [savepoint] = await e.snapshot(checkpointId(3), streams.factory(3), { kind: 'savepoint' }).run();
    expect([base!.type, delta!.type, savepoint!.type]).toEqual(['incremental-key-groups', 'incremental-key-groups', 'key-groups']);
    const byState = async (h: KeyedStateHandle) => {
      const out = new Map<string, { kind: string; sections: number; bytes: number }>();
      for (const f of await keyedHandleKind(h).inspect(h, read)) {
        const s = out.get(f.name) ?? { kind: f.kind, sections: 0, bytes: 0 };
        s.sections++;
        s.bytes += f.bytes;
        out.set(f.name, s);
      }
      return out;
    };
    const full = await byState(savepoint!);
    expect(new Map([...full].map(([n, s]) => [n, s.kind]))).toEqual(
      new Map([
        ['value', 'value'],
        ['list', 'list'],
        ['map', 'map'],
        ['sum', 'reducing'],
        ['avg', 'aggregating'],
      ]),
    );
    const chainFigures = await byState(delta!);
    // The base's sections, and one more for the value state in the changed key's key group.
    expect(chainFigures.get('value')!.sections).toBe(full.get('value')!.sections + 1);
    expect(chainFigures.get('list')).toEqual(full.get('list'));
    expect(chainFigures.get('value')!.bytes).toBeGreaterThan(full.get('value')!.bytes);
  });
});
