/**
 * The keyed state handle kinds, by `type`: the one list a new kind joins (its module exports a
 * `KeyedHandleKind` descriptor; see `kind.ts`). `KeyedStateHandle`, the union of every kind's
 * handle, is derived from the list.
 */
import { assert } from '../../core/assert.ts';
import type { StreamStateHandle } from '../../storage/handles.ts';
import { bindChangelogLookups, changelogHandleKind } from './changelog.ts';
import { incrementalHandleKind } from './incremental.ts';
import { keyGroupsHandleKind } from './key-groups.ts';
import type { KeyedHandleBase, KeyedHandleKind, KeyedHandleSizes } from './kind.ts';

const KINDS = [keyGroupsHandleKind, incrementalHandleKind, changelogHandleKind] as const;

type HandleOf<K> = K extends KeyedHandleKind<infer H> ? H : never;

/** Keyed state of one key-group range as recorded in a checkpoint: a handle of any registered kind. */
export type KeyedStateHandle = HandleOf<(typeof KINDS)[number]>;

const BY_TYPE = new Map<string, unknown>(KINDS.map((k) => [k.type, k]));
const BY_METADATA_TAG = new Map<string | undefined, unknown>(KINDS.map((k) => [k.metadata.tag, k]));
assert(BY_TYPE.size === KINDS.length && BY_METADATA_TAG.size === KINDS.length, () => 'two keyed handle kinds share a type or a metadata tag');

/** The descriptor of `handle`'s kind. */
export function keyedHandleKind<H extends KeyedStateHandle>(handle: H): KeyedHandleKind<H> {
  const kind = BY_TYPE.get(handle.type);
  assert(kind !== undefined, () => `keyed state handle of unknown type ${JSON.stringify(handle.type)}`);
  return kind as KeyedHandleKind<H>;
}

/** The metadata `type` tags of the kinds that write one (full handles write none). */
export const METADATA_TAGS: readonly string[] = KINDS.flatMap((k) => (k.metadata.tag === undefined ? [] : [k.metadata.tag]));

/** The kind whose metadata layout carries `tag` (one of METADATA_TAGS, or undefined for the untagged kind). */
export function keyedHandleKindOfTag(tag: string | undefined): KeyedHandleKind<KeyedStateHandle> {
  const kind = BY_METADATA_TAG.get(tag);
  assert(kind !== undefined, () => `no keyed handle kind has metadata tag ${JSON.stringify(tag)}`);
  return kind as KeyedHandleKind<KeyedStateHandle>;
}

/** Every stream a keyed handle refers to, in restore order. */
export function keyedStreamsOf(handle: KeyedStateHandle): StreamStateHandle[] {
  return keyedHandleKind(handle).streams(handle);
}

/** The figures of one keyed handle for the checkpoint ack (see `KeyedHandleSizes`). */
export function keyedHandleSizes(handle: KeyedStateHandle): KeyedHandleSizes {
  return keyedHandleKind(handle).sizes(handle);
}

/** Whether `handle` is of the kind `kind` describes (for a backend that extends handles of its own kind). */
export function isKeyedHandleOf<H extends KeyedHandleBase>(handle: KeyedStateHandle, kind: KeyedHandleKind<H>): handle is KeyedStateHandle & H {
  return handle.type === kind.type;
}

bindChangelogLookups({ kindOf: keyedHandleKind, kindOfTag: keyedHandleKindOfTag, tags: METADATA_TAGS });
