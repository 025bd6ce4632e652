/**
 * The message codec (issue 23 item 1): every message of the protocol unions survives one encode
 * and decode exactly (a seeded generator of random messages; fast-check is not a dependency), and
 * bytes of another magic or protocol version are refused naming what was found and expected.
 */
import { describe, expect, it } from 'vitest';
import type { CheckpointAck, OperatorSubtaskState } from '../../../src/checkpoint/ack.ts';
import type { CheckpointOptions } from '../../../src/checkpoint/barrier/barrier.ts';
import { CHECKPOINT_FAILURE_MESSAGES, type CheckpointFailureReason } from '../../../src/checkpoint/failure-reason.ts';
import type { ChannelStateHandle, CheckpointMetadata } from '../../../src/checkpoint/metadata/metadata.ts';
import { inMemoryEncodedLinkPair } from '../../../src/cluster/transport/encoded-link.ts';
import { decodeMessage, encodeMessage, MESSAGE_MAGIC, PROTOCOL_VERSION, type ProtocolMessage } from '../../../src/cluster/transport/message-codec.ts';
import { toWireError, type DataMessage, type ToJobMaster, type ToTaskManager, type WireError } from '../../../src/cluster/transport/protocol.ts';
import { ProtocolError, StorageError } from '../../../src/core/errors.ts';
import { checkpointId, jobId, type TaskId } from '../../../src/core/ids.ts';
import { SeededRandom } from '../../../src/core/time.ts';
import type { OperatorStateHandle, StreamStateHandle } from '../../../src/storage/handles.ts';
import type { KeyedStateHandle } from '../../../src/state/handles/registry.ts';
import { epochOf, type Epoch } from '../../../src/cluster/transport/epoch.ts';
import { SimWorld } from '../../../src/sim/world/sim-world.ts';

type Gen = SeededRandom;

const pick = <T>(r: Gen, xs: readonly T[]): T => xs[r.int(xs.length)]!;
const maybe = (r: Gen): boolean => r.next() < 0.5;
const list = <T>(r: Gen, max: number, item: (r: Gen) => T): T[] => Array.from({ length: r.int(max + 1) }, () => item(r));

/** Numbers as the protocol carries them: small and large integers, fractions, negatives (never -0: msgpack has no -0 integer, it arrives as 0). */
function num(r: Gen): number {
  switch (r.int(5)) {
    case 0:
      return r.int(10);
    case 1:
      return r.int(2 ** 31) - 2 ** 30;
    case 2:
      return r.int(2 ** 52) + 2 ** 40;
    case 3:
      return (r.next() - 0.5) * 1e6 || 1;
    default:
      return r.next();
  }
}

function str(r: Gen): string {
  const alphabet = ['a', 'Z', '/', ' ', 'é', '日', '\n', '"', '😀', ':', '\u0000'];
  return Array.from({ length: r.int(24) }, () => pick(r, alphabet)).join('');
}

function bytes(r: Gen): Uint8Array {
  // Mostly small, sometimes a large frame or inline state (one past msgpack's 16-bit bin length).
  const roll = r.next();
  const size = roll < 0.03 ? 70_000 : roll < 0.1 ? 4096 : pick(r, [0, 1, 3, 64, 255]);
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = r.int(256);
  return out;
}

const task = (r: Gen): TaskId => ({ vertex: r.int(8), subtask: r.int(16) });

function wireError(r: Gen, depth = 0): WireError {
  const base = {
    name: pick(r, ['Error', 'StorageError', 'WeirError']),
    message: str(r),
    code: maybe(r) ? pick(r, ['STORAGE_IO', 'JOB_FAILED']) : null,
    file: maybe(r) ? str(r) : null,
    stack: maybe(r) ? str(r) : null,
  };
  // The three shapes `cause` has: absent (toWireError of a non-Error), null, or a nested error.
  const shape = depth >= 4 ? 0 : r.int(3);
  return shape === 0 ? base : shape === 1 ? { ...base, cause: null } : { ...base, cause: wireError(r, depth + 1) };
}

function stream(r: Gen): StreamStateHandle {
  return maybe(r)
    ? { type: 'inline', data: bytes(r), checksum: r.int(2 ** 32) }
    : { type: 'file', path: `memory:sim/chk-${r.int(9)}/${str(r)}`, size: r.int(1e6), checksum: r.int(2 ** 32) };
}

const offsets = (r: Gen): Array<[number, number, number]> => list(r, 4, () => [r.int(128), r.int(1e5), r.int(1e5)]);
const keyCounts = (r: Gen): Record<string, number> => Object.fromEntries(list(r, 3, () => [str(r), r.int(1000)]));

function keyed(r: Gen): KeyedStateHandle {
  const range = { start: r.int(64), end: r.int(128) };
  if (maybe(r)) return { type: 'key-groups', range, offsets: offsets(r), stream: stream(r), keyCounts: keyCounts(r) };
  return {
    type: 'incremental-key-groups',
    range,
    checkpointId: r.int(50),
    knownCompletedCheckpointId: maybe(r) ? null : r.int(50),
    files: list(r, 3, () => ({ kind: pick(r, ['base', 'delta'] as const), checkpointId: r.int(50), offsets: offsets(r), stream: stream(r) })),
    keyCounts: keyCounts(r),
  };
}

const operatorState = (r: Gen): OperatorStateHandle | null =>
  maybe(r)
    ? null
    : { type: 'operator', states: list(r, 3, () => ({ name: str(r), mode: pick(r, ['split', 'union'] as const), count: r.int(9) })), stream: stream(r) };

const channelState = (r: Gen): ChannelStateHandle => ({
  direction: pick(r, ['input', 'output'] as const),
  gate: r.int(3),
  channel: r.int(9),
  stream: stream(r),
  buffers: r.int(40),
});

function metadata(r: Gen): CheckpointMetadata {
  const meta: CheckpointMetadata = {
    jobId: jobId(str(r)),
    checkpointId: checkpointId(1 + r.int(1000)),
    timestampMs: 1_700_000_000_000 + r.int(1e9),
    kind: pick(r, ['checkpoint', 'savepoint'] as const),
    operators: list(r, 3, () => ({
      uid: str(r),
      name: str(r),
      parallelism: 1 + r.int(4),
      maxParallelism: 128,
      subtasks: list(r, 3, () => ({ subtask: r.int(4), keyed: list(r, 2, keyed), operator: operatorState(r), channels: list(r, 2, channelState) })),
    })),
  };
  return maybe(r)
    ? meta
    : {
        ...meta,
        summary: {
          type: pick(r, ['aligned', 'unaligned', 'at-least-once'] as const),
          persistedBytes: r.int(1e6),
          stateBytes: r.int(1e6),
          channelStateBytes: r.int(1e4),
        },
      };
}

function options(r: Gen): CheckpointOptions {
  const o: CheckpointOptions = {
    kind: pick(r, ['checkpoint', 'savepoint'] as const),
    alignment: pick(r, ['aligned', 'at-least-once', 'unaligned'] as const),
    alignedTimeoutMs: maybe(r) ? null : r.int(100),
    isFinal: maybe(r),
  };
  return maybe(r) ? o : { ...o, targetLocation: `memory:savepoints/savepoint-${r.int(9)}-${str(r)}` };
}

function ack(r: Gen): CheckpointAck {
  const operators: OperatorSubtaskState[] = list(r, 3, () => ({
    uid: str(r),
    keyed: list(r, 2, keyed),
    operator: operatorState(r),
    channels: list(r, 2, channelState),
  }));
  return {
    task: task(r),
    checkpointId: checkpointId(1 + r.int(100)),
    operators,
    metrics: {
      syncMs: num(r),
      asyncMs: num(r),
      alignmentMs: num(r),
      alignmentRecords: r.int(1000),
      persistedBytes: r.int(1e6),
      stateBytes: r.int(1e6),
      channelStateBytes: r.int(1e4),
      unaligned: maybe(r),
      barrierArrivalsMs: list(r, 4, () => (maybe(r) ? -1 : num(r))),
      buffersAhead: list(r, 4, () => r.int(10) - 1),
      syncStartMs: num(r),
    },
  };
}

const reasons = Object.keys(CHECKPOINT_FAILURE_MESSAGES) as CheckpointFailureReason[];

/** One generator per message type: a new type of the protocol fails to compile here until it has one. */
/** Epochs as a job master sends them: its leader epoch and an attempt. */
const epoch = (r: Gen): Epoch => epochOf(r.int(5), r.int(100));

const GENERATORS: { readonly [K in ProtocolMessage['type']]: (r: Gen) => Extract<ProtocolMessage, { type: K }> } = {
  deploy: (r) => ({
    type: 'deploy',
    epoch: epoch(r),
    runId: str(r),
    fingerprint: { vertices: list(r, 4, () => ({ name: str(r), parallelism: 1 + r.int(4), uids: list(r, 3, str) })) },
    placement: { taskManagers: 1 + r.int(3), ofSubtask: list(r, 8, () => r.int(3)) },
    restore: maybe(r) ? null : metadata(r),
    firstCheckpointFull: maybe(r),
  }),
  open: (r) => ({ type: 'open', epoch: epoch(r) }),
  start: (r) => ({ type: 'start', epoch: epoch(r) }),
  trigger: (r) => ({
    type: 'trigger',
    epoch: epoch(r),
    task: task(r),
    barrier: { kind: 'barrier', checkpointId: checkpointId(1 + r.int(100)), timestamp: 1_700_000_000_000 + r.int(1e9), options: options(r) },
  }),
  'notify-complete': (r) => ({ type: 'notify-complete', epoch: epoch(r), task: task(r), checkpointId: checkpointId(1 + r.int(100)) }),
  'notify-aborted': (r) => ({ type: 'notify-aborted', epoch: epoch(r), task: task(r), checkpointId: checkpointId(1 + r.int(100)) }),
  cancel: (r) => ({ type: 'cancel', epoch: epoch(r) }),
  hello: () => ({ type: 'hello' }),
  heartbeat: (r) => ({ type: 'heartbeat', epoch: epoch(r), seq: r.int(1e6), at: 1_700_000_000_000 + num(r) }),
  deployed: (r) => ({ type: 'deployed', epoch: epoch(r), tasks: list(r, 4, () => ({ task: task(r), name: str(r), isSource: maybe(r) })) }),
  'deploy-failed': (r) => ({ type: 'deploy-failed', epoch: epoch(r), error: wireError(r) }),
  opened: (r) => ({ type: 'opened', epoch: epoch(r) }),
  'open-failed': (r) => ({ type: 'open-failed', epoch: epoch(r), error: wireError(r) }),
  ack: (r) => ({ type: 'ack', epoch: epoch(r), ack: ack(r) }),
  decline: (r) => ({
    type: 'decline',
    epoch: epoch(r),
    task: task(r),
    checkpointId: checkpointId(1 + r.int(100)),
    reason: pick(r, reasons),
    cause: maybe(r) ? null : wireError(r),
  }),
  'end-of-data': (r) => ({ type: 'end-of-data', epoch: epoch(r), task: task(r) }),
  'task-finished': (r) => ({ type: 'task-finished', epoch: epoch(r), task: task(r) }),
  'task-failed': (r) => ({ type: 'task-failed', epoch: epoch(r), task: task(r), error: wireError(r) }),
  metrics: (r) => ({
    type: 'metrics',
    epoch: epoch(r),
    clockMs: num(r),
    tasks: list(r, 4, () => ({
      task: task(r),
      sourceRecordsOut: r.int(1e7),
      sinkRecordsIn: r.int(1e7),
      recordsIn: r.int(1e7),
      recordsWritten: r.int(1e7),
      backpressuredMs: num(r),
      changelog:
        r.int(2) === 0
          ? null
          : {
              pendingBytes: r.int(1e9),
              inFlightBytes: r.int(1e9),
              uploadedBytes: r.int(1e12),
              uploads: r.int(1e6),
              retries: r.int(100),
              failures: r.int(10),
              materializations: r.int(100),
              materializationFailures: r.int(10),
              materializedAtMs: r.int(2) === 0 ? null : 1_700_000_000_000 + r.int(1e9),
              materializedBytes: r.int(1e12),
              truncations: r.int(1e4),
              restoresByReplay: r.int(10),
            },
    })),
    data: { bytesSent: r.int(1e12), bytesReceived: r.int(1e12), messagesSent: r.int(1e9), messagesReceived: r.int(1e9) },
  }),
  canceled: (r) => ({ type: 'canceled', epoch: epoch(r) }),
  frame: (r) => ({ type: 'frame', channel: r.int(1e4), frame: bytes(r) }),
  credit: (r) => ({ type: 'credit', channel: r.int(1e4), buffers: 1 + r.int(32) }),
};

const TYPES = Object.keys(GENERATORS) as Array<ProtocolMessage['type']>;
/** Random messages per type. */
const ROUNDS = 50;

function randomMessage(r: Gen, type: ProtocolMessage['type'] = pick(r, TYPES)): ProtocolMessage {
  return (GENERATORS[type] as (r: Gen) => ProtocolMessage)(r);
}

describe('the message codec', () => {
  it('round-trips every message of the protocol unions exactly (seeded random messages, every type many times)', () => {
    const seed = 23;
    console.log(`seed ${seed}`);
    const r = new SeededRandom(seed);
    let checked = 0;
    for (const type of TYPES) {
      for (let i = 0; i < ROUNDS; i++) {
        const message = randomMessage(r, type);
        const decoded = decodeMessage(encodeMessage(message));
        expect(decoded, `${type} #${i}`).toStrictEqual(message);
        checked++;
      }
    }
    expect(checked).toBe(TYPES.length * ROUNDS);
  });

  it('keeps errors with their cause chain as toWireError makes them, and frames as own buffers at offset 0', () => {
    const error = new StorageError('STORAGE_IO', 'memory:sim/chk-3/x', 'torn', { cause: new Error('disk', { cause: 'not an error' }) });
    const message: ToJobMaster = { type: 'task-failed', epoch: epochOf(0, 3), task: { vertex: 1, subtask: 0 }, error: toWireError(error) };
    expect(decodeMessage(encodeMessage(message))).toStrictEqual(message);
    const frame = new Uint8Array([9, 8, 7, 6, 5, 4, 3, 2]).subarray(3);
    const decoded = decodeMessage<DataMessage>(encodeMessage({ type: 'frame', channel: 4, frame }));
    expect(decoded.type === 'frame' && decoded.frame.constructor).toBe(Uint8Array);
    expect(decoded.type === 'frame' && [decoded.frame.byteOffset, decoded.frame.buffer.byteLength, [...decoded.frame]]).toEqual([0, 5, [6, 5, 4, 3, 2]]);
  });

  it('starts every message with the magic byte and the protocol version', () => {
    const bytes = encodeMessage({ type: 'heartbeat', epoch: epochOf(0, 0), seq: 7 });
    expect([bytes[0], bytes[1]]).toEqual([MESSAGE_MAGIC, PROTOCOL_VERSION]);
    expect(bytes.byteOffset).toBe(0);
  });

  it('refuses another magic byte, another protocol version, empty bytes and a body that is no message, naming found and expected', () => {
    const good = encodeMessage({ type: 'start', epoch: epochOf(0, 0) });
    const with0 = (b: number) => Uint8Array.from(good, (x, i) => (i === 0 ? b : x));
    const with1 = (b: number) => Uint8Array.from(good, (x, i) => (i === 1 ? b : x));
    const failure = (bytes: Uint8Array): ProtocolError => {
      try {
        decodeMessage(bytes);
      } catch (err) {
        expect(err).toBeInstanceOf(ProtocolError);
        return err as ProtocolError;
      }
      throw new Error('decoded');
    };
    const magic = failure(with0(0x42));
    expect([magic.code, magic.field, magic.found, magic.expected]).toEqual(['CORRUPT_FRAME', 'magic', 0x42, MESSAGE_MAGIC]);
    expect(magic.message).toBe('not a Weir protocol message: magic byte 0x42 found, 0x57 expected');
    const version = failure(with1(PROTOCOL_VERSION + 1));
    expect([version.field, version.found, version.expected]).toEqual(['version', PROTOCOL_VERSION + 1, PROTOCOL_VERSION]);
    expect(version.message).toBe(`protocol version ${PROTOCOL_VERSION + 1} found, ${PROTOCOL_VERSION} expected: the peer runs another release of Weir`);
    expect(failure(new Uint8Array(0)).message).toBe('not a Weir protocol message: magic byte none found, 0x57 expected');
    expect(failure(new Uint8Array([MESSAGE_MAGIC])).message).toBe(
      `protocol version missing found, ${PROTOCOL_VERSION} expected: the peer runs another release of Weir`,
    );
    const body = failure(Uint8Array.from([MESSAGE_MAGIC, PROTOCOL_VERSION, 0x81, 0xa4, 0x74, 0x79, 0x70, 0x65, 0xa3, 0x66, 0x6f, 0x6f]));
    expect([body.field, body.message]).toEqual(['body', 'protocol message of 12 bytes has no known type (found "foo")']);
  });
});

describe('the encoded in-memory link', () => {
  it('delivers what was sent at send time: a message changed after send arrives as it was', () => {
    const world = new SimWorld(5, { stepCostMsMax: 0, slowProbability: 0, slowDelayMsMax: 0 });
    const [master, manager] = inMemoryEncodedLinkPair<ToTaskManager, ToJobMaster>(world);
    const got: ToTaskManager[] = [];
    manager.onMessage((m) => got.push(m));
    const placement = { taskManagers: 2, ofSubtask: [0, 1] };
    const sent: ToTaskManager = {
      type: 'deploy',
      epoch: epochOf(0, 1),
      runId: 'r',
      fingerprint: { vertices: [] },
      placement,
      restore: null,
      firstCheckpointFull: false,
    };
    master.send(sent);
    (placement.ofSubtask as number[])[1] = 0; // the sender's object changes after the send
    while (world.step()) {}
    expect(got).toEqual([{ ...sent, placement: { taskManagers: 2, ofSubtask: [0, 1] } }]);
    expect(got[0]).not.toBe(sent);
  });

  it('keeps each direction FIFO on the simulator, as the plain in-memory link does', () => {
    const world = new SimWorld(11, { stepCostMsMax: 0.5, slowProbability: 0.3, slowDelayMsMax: 5 });
    const [a, b] = inMemoryEncodedLinkPair<DataMessage, DataMessage>(world);
    const got: number[] = [];
    b.onMessage((m) => got.push(m.channel));
    for (let i = 0; i < 100; i++) a.send({ type: 'credit', channel: i, buffers: 1 });
    while (world.step()) {}
    expect(got).toEqual(Array.from({ length: 100 }, (_, i) => i));
  });
});
