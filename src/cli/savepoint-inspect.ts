/**
 * `weir savepoint inspect <path> [--json]`: what a savepoint (or checkpoint) holds — its format
 * version, kind, id, job and creation time, and per operator its uid, name, parallelism and
 * states: name, kind (value/list/map/reducing/aggregating for keyed state, read from the keyed
 * stream's sections; split/union for operator state), keys or entries, and bytes.
 */
import { resolveStorageLocation, snapshotToolsFor } from '../storage/location.ts';
import type { OperatorStateMeta } from '../checkpoint/metadata/metadata.ts';
import { SUPPORTED_METADATA_VERSIONS } from '../checkpoint/metadata/serializer.ts';
import { encodeValue } from '../state/codec.ts';
import { readOperatorHandle } from '../state/formats/operator-stream.ts';
import { keyedHandleKind } from '../state/handles/registry.ts';
import { decodeEnvelope } from '../storage/file-format.ts';
import { snapshotSizeBytes } from '../checkpoint/restore/checkpoint-listing.ts';
import { keyedHandleKindsOf } from '../checkpoint/restore/snapshot-listing.ts';
import { readCheckpointMetadataAt, resolveCheckpointLocation } from '../checkpoint/restore/locate.ts';
import { FS_SNAPSHOT_TOOLS, type SnapshotTools } from '../storage/snapshot-tools.ts';
import { streamSize } from '../storage/handles.ts';
import { metadataPath } from '../storage/paths.ts';
import { EXIT_OK } from './exit.ts';
import { groupDigits, humanBytes, isoTime, renderTable } from './format.ts';

export interface StateReport {
  readonly name: string;
  readonly scope: 'keyed' | 'operator';
  /** Keyed: value, list, map, reducing or aggregating (null when no key holds a value); operator: split or union. */
  readonly kind: string | null;
  /** Keyed state: the number of keys holding a value. */
  readonly keys?: number;
  /** Operator state: the number of list entries over all subtasks. */
  readonly entries?: number;
  /** Encoded size of the state's data inside the streams. */
  readonly bytes: number;
}

export interface OperatorReport {
  readonly uid: string;
  readonly name: string;
  readonly parallelism: number;
  readonly maxParallelism: number;
  /** Sizes of the operator's streams: keyed, operator and in-flight (unaligned checkpoints only). */
  readonly keyedBytes: number;
  readonly operatorBytes: number;
  readonly inflightBytes: number;
  readonly states: readonly StateReport[];
}

export interface SnapshotReport {
  readonly location: string;
  readonly formatVersion: number;
  readonly kind: 'checkpoint' | 'savepoint';
  readonly checkpointId: number;
  readonly jobId: string;
  readonly createdAt: string;
  readonly timestampMs: number;
  /** Bytes on disk: its files, `_metadata` included. */
  readonly sizeBytes: number;
  readonly type: string | null;
  /** The kinds of its keyed state handles: a savepoint's are always `key-groups`. */
  readonly handleKinds: readonly string[];
  readonly operators: readonly OperatorReport[];
}

/** What the snapshot at `p` holds; on the file system unless another storage's `tools` are given. */
export async function inspectSnapshot(p: string, tools: SnapshotTools = FS_SNAPSHOT_TOOLS): Promise<SnapshotReport> {
  const location = await resolveCheckpointLocation(p, tools.reader);
  const meta = await readCheckpointMetadataAt(location, tools.reader);
  const file = metadataPath(location);
  const formatVersion = decodeEnvelope('metadata', await tools.reader.readMetadataBytes(location), file, SUPPORTED_METADATA_VERSIONS).version;
  const operators: OperatorReport[] = [];
  for (const op of meta.operators) operators.push(await inspectOperator(op, tools.readState));
  return {
    location,
    formatVersion,
    kind: meta.kind,
    checkpointId: meta.checkpointId,
    jobId: meta.jobId,
    createdAt: isoTime(meta.timestampMs),
    timestampMs: meta.timestampMs,
    sizeBytes: await snapshotSizeBytes(tools.reader, location, meta),
    type: meta.summary?.type ?? null,
    handleKinds: keyedHandleKindsOf(meta),
    operators,
  };
}

async function inspectOperator(op: OperatorStateMeta, readState: SnapshotTools['readState']): Promise<OperatorReport> {
  const keyed = new Map<string, { kind: string | null; keys: number; bytes: number }>();
  const operator = new Map<string, { kind: string; entries: number; bytes: number }>();
  let keyedBytes = 0;
  let operatorBytes = 0;
  let inflightBytes = 0;
  for (const st of op.subtasks) {
    for (const handle of st.keyed) {
      const kind = keyedHandleKind(handle);
      keyedBytes += kind.sizes(handle).stateBytes;
      for (const [name, n] of Object.entries(handle.keyCounts)) {
        const s = keyed.get(name) ?? { kind: null, keys: 0, bytes: 0 };
        s.keys += n;
        keyed.set(name, s);
      }
      // A savepoint is one full stream per handle; an incremental checkpoint's is a chain of files (bytes: all of them).
      for (const section of await kind.inspect(handle, readState)) {
        const s = keyed.get(section.name) ?? { kind: null, keys: 0, bytes: 0 };
        s.kind ??= section.kind;
        s.bytes += section.bytes;
        keyed.set(section.name, s);
      }
    }
    if (st.operator !== null) {
      operatorBytes += streamSize(st.operator.stream);
      for (const list of await readOperatorHandle(st.operator, readState)) {
        const s = operator.get(list.name) ?? { kind: list.mode, entries: 0, bytes: 0 };
        s.entries += list.entries.length;
        s.bytes += encodeValue(list.entries).byteLength;
        operator.set(list.name, s);
      }
    }
    for (const c of st.channels) inflightBytes += streamSize(c.stream);
  }
  const states: StateReport[] = [
    ...[...keyed].map(([name, s]): StateReport => ({ name, scope: 'keyed', kind: s.kind, keys: s.keys, bytes: s.bytes })),
    ...[...operator].map(([name, s]): StateReport => ({ name, scope: 'operator', kind: s.kind, entries: s.entries, bytes: s.bytes })),
  ];
  return { uid: op.uid, name: op.name, parallelism: op.parallelism, maxParallelism: op.maxParallelism, keyedBytes, operatorBytes, inflightBytes, states };
}

export function formatReport(r: SnapshotReport): string {
  const head = [
    `${r.kind} ${r.location}`,
    `  format version  ${r.formatVersion}`,
    `  kind            ${r.kind}${r.type ? ` (${r.type})` : ''}`,
    `  checkpoint id   ${r.checkpointId}`,
    `  job id          ${r.jobId}`,
    `  created         ${r.createdAt}`,
    `  size            ${humanBytes(r.sizeBytes)}`,
    `  keyed handles   ${r.handleKinds.length === 0 ? '-' : r.handleKinds.join(', ')}`,
    '',
  ].join('\n');
  const rows: string[][] = [];
  for (const op of r.operators) {
    const opCells = [op.uid, op.name, String(op.parallelism), String(op.maxParallelism)];
    if (op.states.length === 0) rows.push([...opCells, '-', '-', '-', '-']);
    for (const s of op.states) {
      const count = s.scope === 'keyed' ? plural(s.keys ?? 0, 'key', 'keys') : plural(s.entries ?? 0, 'entry', 'entries');
      rows.push([...opCells, s.name, s.kind === null ? `${s.scope} (empty)` : `${s.scope} ${s.kind}`, count, humanBytes(s.bytes)]);
    }
  }
  const table = renderTable(['UID', 'NAME', 'PARALLELISM', 'MAX PARALLELISM', 'STATE', 'KIND', 'KEYS/ENTRIES', 'BYTES'], rows);
  return `${head}\n${table}`;
}

function plural(n: number, one: string, many: string): string {
  return `${groupDigits(n)} ${n === 1 ? one : many}`;
}

export async function inspectCommand(p: string, flags: { json?: boolean }): Promise<number> {
  const location = resolveStorageLocation(p, 'savepoint inspect <path>');
  const report = await inspectSnapshot(location, snapshotToolsFor(location, 'savepoint inspect <path>'));
  process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
  return EXIT_OK;
}
