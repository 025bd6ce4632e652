/**
 * Reads text files line by line. Each file is a split; a split's byte offset and line number are
 * operator list state, so after recovery reading resumes at the first line not yet checkpointed.
 * Reads are synchronous chunks (64 KiB) inside the task's step: simple, and bounded per poll.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { StorageError } from '../../core/errors.ts';
import type { Collector, RuntimeContext } from '../../runtime/functions.ts';
import { POLL_END, POLL_MORE, type PollStatus } from '../../runtime/operator.ts';
import type { Source, SourceReader } from '../../runtime/source.ts';
import { ListStateDescriptor } from '../../state/descriptors.ts';
import type { ListState } from '../../state/state.ts';

interface FileSplit {
  readonly path: string;
  offset: number;
  line: number;
}

const SPLITS = new ListStateDescriptor<FileSplit>('file-splits');
const CHUNK_BYTES = 65536;

class TextFileReader implements SourceReader<string> {
  private splits: FileSplit[] = [];
  private state!: ListState<FileSplit>;
  private fd: number | null = null;
  private carry = '';
  private readonly chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  /** Offset of the first byte not yet read into `carry`. */
  private readOffset = 0;
  private lines: string[] = [];
  private lineIndex = 0;
  private lineBytes: number[] = [];
  private decoder = new StringDecoder('utf8');

  constructor(private readonly paths: readonly string[]) {}

  open(ctx: RuntimeContext): void {
    this.state = ctx.getOperatorListState(SPLITS);
    if (ctx.restored) this.splits = this.state.get().map((s) => ({ ...s }));
    else this.splits = this.paths.filter((_, i) => i % ctx.parallelism === ctx.subtaskIndex).map((path) => ({ path, offset: 0, line: 0 }));
  }

  poll(out: Collector<string>, maxRecords: number): PollStatus {
    let emitted = 0;
    while (emitted < maxRecords) {
      const split = this.current();
      if (!split) return POLL_END;
      if (this.lineIndex < this.lines.length) {
        out.collect(this.lines[this.lineIndex]!);
        split.offset += this.lineBytes[this.lineIndex]!;
        split.line++;
        this.lineIndex++;
        emitted++;
        continue;
      }
      if (!this.fill(split)) {
        this.closeFile();
        this.splits.shift();
        this.resetBuffer();
      }
    }
    return this.current() ? POLL_MORE : POLL_END;
  }

  private current(): FileSplit | undefined {
    return this.splits[0];
  }

  /** Reads the next chunk into whole lines; false at the end of the file. */
  private fill(split: FileSplit): boolean {
    if (this.fd === null) {
      try {
        this.fd = openSync(split.path, 'r');
      } catch (err) {
        throw new StorageError('MISSING_FILE', split.path, 'cannot open input file', { cause: err });
      }
      this.readOffset = split.offset;
      this.resetBuffer();
      this.decoder = new StringDecoder('utf8');
    }
    const n = readSync(this.fd, this.chunk, 0, CHUNK_BYTES, this.readOffset);
    if (n === 0) {
      if (this.carry.length === 0) return false;
      this.setLines([this.carry], [Buffer.byteLength(this.carry)]);
      this.carry = '';
      return true;
    }
    this.readOffset += n;
    const text = this.carry + this.decoder.write(this.chunk.subarray(0, n));
    const parts = text.split('\n');
    this.carry = parts.pop()!;
    this.setLines(
      parts,
      parts.map((p) => Buffer.byteLength(p) + 1),
    );
    return true;
  }

  private setLines(lines: string[], bytes: number[]): void {
    this.lines = lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
    this.lineBytes = bytes;
    this.lineIndex = 0;
  }

  private resetBuffer(): void {
    this.carry = '';
    this.lines = [];
    this.lineBytes = [];
    this.lineIndex = 0;
  }

  private closeFile(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  snapshotState(): void {
    this.state.update(this.splits.map((s) => ({ ...s })));
  }

  close(): void {
    this.closeFile();
  }
}

export class TextFileSource implements Source<string> {
  readonly name = 'text-file';
  readonly bounded = true;
  constructor(private readonly paths: readonly string[]) {}
  createReader(): SourceReader<string> {
    return new TextFileReader(this.paths);
  }
}
