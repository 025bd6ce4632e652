/**
 * Metadata format version 1: the msgpack body inside the `_metadata` envelope. Once released this
 * reader is kept forever and never edited; a change of layout is a new version beside it.
 *
 * Body (msgpack, maps with these keys):
 *   { jobId, checkpointId, timestampMs, kind, operators: [
 *       { uid, name, parallelism, maxParallelism, subtasks: [
 *           { subtask, keyed: [full | incremental],
 *             operator: null | { states: [{ name, mode, count }], stream },
 *             channels: [{ direction, gate, channel, stream, buffers }] } ] } ],
 *     summary?: { type, persistedBytes, stateBytes, channelStateBytes } }
 *   full = { range: [start, end], offsets: [[kg, off, len]], stream, keyCounts: [[name, n]] }
 *   incremental = { type: 'incremental', range: [start, end], checkpointId, knownCompletedCheckpointId: n | null,
 *       files: [{ kind: 'base' | 'delta', checkpointId, offsets: [[kg, off, len]], stream }], keyCounts: [[name, n]] }
 *   (each keyed handle kind writes and reads its own layout: `metadata` of its descriptor in state/handles/;
 *   test/checkpoint/metadata/keyed-kinds-fixture.test.ts pins both byte for byte)
 *   stream = { type: 'file', path, size, checksum } | { type: 'inline', data, checksum }
 *   (format 2, `metadata-v2.ts`, is this body with one more kind of stream; it reuses the walk below)
 * `path` is relative to the directory holding `_metadata`, with `/` separators.
 */
import { assert } from '../../core/assert.ts';
import { checkpointId, jobId } from '../../core/ids.ts';
import { keyedHandleKind, keyedHandleKindOfTag, METADATA_TAGS, type KeyedStateHandle } from '../../state/handles/registry.ts';
import type { OperatorStateEntry, OperatorStateHandle, StreamStateHandle } from '../../storage/handles.ts';
import { relativePath, resolveRelative } from '../../storage/paths.ts';
import { WireCheck } from '../../storage/wire-check.ts';
import type { ChannelStateHandle, CheckpointMetadata, CheckpointSummary, OperatorStateMeta, SubtaskStateMeta } from './metadata.ts';

const U32_MAX = 0xffff_ffff;

// ---- writer ---------------------------------------------------------------------------------

export function writeMetadataV1(meta: CheckpointMetadata, metadataDir: string): unknown {
  return writeMetadataBody(meta, (h) => writeStreamV1(h, metadataDir));
}

/** How one version writes a stream handle (file paths relative to the metadata's directory). */
export type StreamWriter = (h: StreamStateHandle) => unknown;

/** The body layout of versions 1 and on, with stream handles written by `writeStream`. */
export function writeMetadataBody(meta: CheckpointMetadata, writeStream: StreamWriter): unknown {
  assert(Number.isSafeInteger(meta.checkpointId) && meta.checkpointId >= 0, () => `invalid checkpoint id ${meta.checkpointId}`);
  assert(Number.isFinite(meta.timestampMs), () => `invalid timestampMs ${meta.timestampMs}`);
  return {
    jobId: meta.jobId,
    checkpointId: meta.checkpointId,
    timestampMs: meta.timestampMs,
    kind: meta.kind,
    operators: meta.operators.map((op) => ({
      uid: op.uid,
      name: op.name,
      parallelism: op.parallelism,
      maxParallelism: op.maxParallelism,
      subtasks: op.subtasks.map((st) => writeSubtask(st, writeStream)),
    })),
    ...(meta.summary ? { summary: { ...meta.summary } } : {}),
  };
}

function writeSubtask(st: SubtaskStateMeta, writeStream: StreamWriter): unknown {
  return {
    subtask: st.subtask,
    keyed: st.keyed.map((k) => keyedHandleKind(k).metadata.write(k, writeStream)),
    operator:
      st.operator === null
        ? null
        : {
            states: st.operator.states.map((s) => ({ name: s.name, mode: s.mode, count: s.count })),
            stream: writeStream(st.operator.stream),
          },
    channels: st.channels.map((c) => ({
      direction: c.direction,
      gate: c.gate,
      channel: c.channel,
      stream: writeStream(c.stream),
      buffers: c.buffers,
    })),
  };
}

/** Version 1's streams: whole files and inline bytes. */
export function writeStreamV1(h: StreamStateHandle, dir: string): unknown {
  assert(Number.isInteger(h.checksum) && h.checksum >= 0 && h.checksum <= U32_MAX, () => `invalid checksum ${h.checksum}`);
  if (h.type === 'inline') return { type: 'inline', data: h.data, checksum: h.checksum };
  assert(h.type === 'file', () => `format 1 has no ${h.type} streams (${h.path}): the serializer writes a later version`);
  assert(Number.isSafeInteger(h.size) && h.size >= 0, () => `invalid size ${h.size} of ${h.path}`);
  return { type: 'file', path: relativePath(dir, h.path), size: h.size, checksum: h.checksum };
}

// ---- reader ---------------------------------------------------------------------------------

/** Reads a decoded V1 body; file paths are resolved against `metadataDir`. */
export function readMetadataV1(body: unknown, metadataDir: string, file: string): CheckpointMetadata {
  return readMetadataBody(body, file, (c, v, at) => readStreamV1(c, v, at, metadataDir));
}

/** How one version reads a stream handle (file paths resolved against the metadata's directory). */
export type StreamReader = (c: WireCheck, v: unknown, at: string) => StreamStateHandle;

/** The body layout of versions 1 and on, with stream handles read by `readStream`. */
export function readMetadataBody(body: unknown, file: string, readStream: StreamReader): CheckpointMetadata {
  const c = new WireCheck(file);
  const m = c.object(body, 'root');
  const operators = c.array(m.operators, 'operators').map((op, i) => readOperator(c, op, `operators[${i}]`, readStream));
  return {
    jobId: jobId(c.nonEmptyString(m.jobId, 'jobId')),
    checkpointId: checkpointId(c.int(m.checkpointId, 'checkpointId')),
    timestampMs: c.finite(m.timestampMs, 'timestampMs'),
    kind: c.oneOf(m.kind, 'kind', ['checkpoint', 'savepoint'] as const),
    operators,
    ...(m.summary === undefined ? {} : { summary: readSummary(c, m.summary) }),
  };
}

function readSummary(c: WireCheck, v: unknown): CheckpointSummary {
  const o = c.object(v, 'summary');
  return {
    type: c.oneOf(o.type, 'summary.type', ['aligned', 'unaligned', 'at-least-once'] as const),
    persistedBytes: c.int(o.persistedBytes, 'summary.persistedBytes'),
    stateBytes: c.int(o.stateBytes, 'summary.stateBytes'),
    channelStateBytes: c.int(o.channelStateBytes, 'summary.channelStateBytes'),
  };
}

function readOperator(c: WireCheck, v: unknown, at: string, readStream: StreamReader): OperatorStateMeta {
  const o = c.object(v, at);
  return {
    uid: c.nonEmptyString(o.uid, `${at}.uid`),
    name: c.string(o.name, `${at}.name`),
    parallelism: c.int(o.parallelism, `${at}.parallelism`, 1),
    maxParallelism: c.int(o.maxParallelism, `${at}.maxParallelism`, 1),
    subtasks: c.array(o.subtasks, `${at}.subtasks`).map((st, i) => readSubtask(c, st, `${at}.subtasks[${i}]`, readStream)),
  };
}

function readSubtask(c: WireCheck, v: unknown, at: string, readStream: StreamReader): SubtaskStateMeta {
  const o = c.object(v, at);
  return {
    subtask: c.int(o.subtask, `${at}.subtask`),
    keyed: c.array(o.keyed, `${at}.keyed`).map((k, i) => readKeyed(c, k, `${at}.keyed[${i}]`, readStream)),
    operator: o.operator === null ? null : readOperatorState(c, o.operator, `${at}.operator`, readStream),
    channels: c.array(o.channels, `${at}.channels`).map((ch, i) => readChannel(c, ch, `${at}.channels[${i}]`, readStream)),
  };
}

function readKeyed(c: WireCheck, v: unknown, at: string, readStream: StreamReader): KeyedStateHandle {
  const o = c.object(v, at);
  const tag = o.type === undefined ? undefined : c.oneOf(o.type, `${at}.type`, METADATA_TAGS);
  return keyedHandleKindOfTag(tag).metadata.read(c, o, at, (s, streamAt) => readStream(c, s, streamAt));
}

function readOperatorState(c: WireCheck, v: unknown, at: string, readStream: StreamReader): OperatorStateHandle {
  const o = c.object(v, at);
  const states: OperatorStateEntry[] = c.array(o.states, `${at}.states`).map((s, i) => {
    const e = c.object(s, `${at}.states[${i}]`);
    return {
      name: c.string(e.name, `${at}.states[${i}].name`),
      mode: c.oneOf(e.mode, `${at}.states[${i}].mode`, ['split', 'union'] as const),
      count: c.int(e.count, `${at}.states[${i}].count`),
    };
  });
  return { type: 'operator', states, stream: readStream(c, o.stream, `${at}.stream`) };
}

function readChannel(c: WireCheck, v: unknown, at: string, readStream: StreamReader): ChannelStateHandle {
  const o = c.object(v, at);
  return {
    direction: c.oneOf(o.direction, `${at}.direction`, ['input', 'output'] as const),
    gate: c.int(o.gate, `${at}.gate`),
    channel: c.int(o.channel, `${at}.channel`),
    stream: readStream(c, o.stream, `${at}.stream`),
    buffers: c.int(o.buffers, `${at}.buffers`),
  };
}

/** Version 1's streams: whole files and inline bytes. */
export function readStreamV1(c: WireCheck, v: unknown, at: string, dir: string): StreamStateHandle {
  const o = c.object(v, at);
  const type = c.oneOf(o.type, `${at}.type`, ['file', 'inline'] as const);
  const checksum = c.int(o.checksum, `${at}.checksum`, 0, U32_MAX);
  if (type === 'inline') return { type, data: c.bytes(o.data, `${at}.data`), checksum };
  const rel = c.nonEmptyString(o.path, `${at}.path`);
  if (rel.startsWith('/') || rel.includes('\\') || /^[A-Za-z]:/.test(rel)) c.fail(`${at}.path`, 'a relative path');
  return { type, path: resolveRelative(dir, rel), size: c.int(o.size, `${at}.size`), checksum };
}
