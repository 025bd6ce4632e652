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
      subtasks: op.subtasks.map((st) => writeSubtask(st, metadataDir)),
    })),
    ...(meta.summary ? { summary: { ...meta.summary } } : {}),
  };
}

function writeSubtask(st: SubtaskStateMeta, dir: string): unknown {
  return {
    subtask: st.subtask,
    keyed: st.keyed.map((k) => writeKeyed(k, dir)),
    operator:
      st.operator === null
        ? null
        : {
            states: st.operator.states.map((s) => ({ name: s.name, mode: s.mode, count: s.count })),
            stream: writeStream(st.operator.stream, dir),
          },
    channels: st.channels.map((c) => ({
      direction: c.direction,
      gate: c.gate,
      channel: c.channel,
      stream: writeStream(c.stream, dir),
      buffers: c.buffers,
    })),
  };
}

function writeKeyed(k: KeyedStateHandle, dir: string): unknown {
  return keyedHandleKind(k).metadata.write(k, (h) => writeStream(h, dir));
}

function writeStream(h: StreamStateHandle, dir: string): unknown {
  assert(Number.isInteger(h.checksum) && h.checksum >= 0 && h.checksum <= U32_MAX, () => `invalid checksum ${h.checksum}`);
  if (h.type === 'inline') return { type: 'inline', data: h.data, checksum: h.checksum };
  assert(Number.isSafeInteger(h.size) && h.size >= 0, () => `invalid size ${h.size} of ${h.path}`);
  return { type: 'file', path: relativePath(dir, h.path), size: h.size, checksum: h.checksum };
}

// ---- reader ---------------------------------------------------------------------------------

/** Reads a decoded V1 body; file paths are resolved against `metadataDir`. */
export function readMetadataV1(body: unknown, metadataDir: string, file: string): CheckpointMetadata {
  const c = new WireCheck(file);
  const m = c.object(body, 'root');
  const operators = c.array(m.operators, 'operators').map((op, i) => readOperator(c, op, `operators[${i}]`, metadataDir));
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

function readOperator(c: WireCheck, v: unknown, at: string, dir: string): OperatorStateMeta {
  const o = c.object(v, at);
  return {
    uid: c.nonEmptyString(o.uid, `${at}.uid`),
    name: c.string(o.name, `${at}.name`),
    parallelism: c.int(o.parallelism, `${at}.parallelism`, 1),
    maxParallelism: c.int(o.maxParallelism, `${at}.maxParallelism`, 1),
    subtasks: c.array(o.subtasks, `${at}.subtasks`).map((st, i) => readSubtask(c, st, `${at}.subtasks[${i}]`, dir)),
  };
}

function readSubtask(c: WireCheck, v: unknown, at: string, dir: string): SubtaskStateMeta {
  const o = c.object(v, at);
  return {
    subtask: c.int(o.subtask, `${at}.subtask`),
    keyed: c.array(o.keyed, `${at}.keyed`).map((k, i) => readKeyed(c, k, `${at}.keyed[${i}]`, dir)),
    operator: o.operator === null ? null : readOperatorState(c, o.operator, `${at}.operator`, dir),
    channels: c.array(o.channels, `${at}.channels`).map((ch, i) => readChannel(c, ch, `${at}.channels[${i}]`, dir)),
  };
}

function readKeyed(c: WireCheck, v: unknown, at: string, dir: string): KeyedStateHandle {
  const o = c.object(v, at);
  const tag = o.type === undefined ? undefined : c.oneOf(o.type, `${at}.type`, METADATA_TAGS);
  return keyedHandleKindOfTag(tag).metadata.read(c, o, at, (s, streamAt) => readStream(c, s, streamAt, dir));
}

function readOperatorState(c: WireCheck, v: unknown, at: string, dir: string): OperatorStateHandle {
  const o = c.object(v, at);
  const states: OperatorStateEntry[] = c.array(o.states, `${at}.states`).map((s, i) => {
    const e = c.object(s, `${at}.states[${i}]`);
    return {
      name: c.string(e.name, `${at}.states[${i}].name`),
      mode: c.oneOf(e.mode, `${at}.states[${i}].mode`, ['split', 'union'] as const),
      count: c.int(e.count, `${at}.states[${i}].count`),
    };
  });
  return { type: 'operator', states, stream: readStream(c, o.stream, `${at}.stream`, dir) };
}

function readChannel(c: WireCheck, v: unknown, at: string, dir: string): ChannelStateHandle {
  const o = c.object(v, at);
  return {
    direction: c.oneOf(o.direction, `${at}.direction`, ['input', 'output'] as const),
    gate: c.int(o.gate, `${at}.gate`),
    channel: c.int(o.channel, `${at}.channel`),
    stream: readStream(c, o.stream, `${at}.stream`, dir),
    buffers: c.int(o.buffers, `${at}.buffers`),
  };
}

function readStream(c: WireCheck, v: unknown, at: string, dir: string): StreamStateHandle {
  const o = c.object(v, at);
  const type = c.oneOf(o.type, `${at}.type`, ['file', 'inline'] as const);
  const checksum = c.int(o.checksum, `${at}.checksum`, 0, U32_MAX);
  if (type === 'inline') return { type, data: c.bytes(o.data, `${at}.data`), checksum };
  const rel = c.nonEmptyString(o.path, `${at}.path`);
  if (rel.startsWith('/') || rel.includes('\\') || /^[A-Za-z]:/.test(rel)) c.fail(`${at}.path`, 'a relative path');
  return { type, path: resolveRelative(dir, rel), size: c.int(o.size, `${at}.size`), checksum };
}
