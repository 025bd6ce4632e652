/**
 * COPY ... FROM STDIN over the `pg` client without pg-copy-streams (not a dependency): a minimal
 * submittable query that sends the rows in text format once the server asks for them. For the
 * connectors benchmark only (COPY against multi-row INSERT); the sink does not use it.
 */
import type pg from 'pg';

/** The parts of the `pg` connection a COPY needs (not in its type declarations). */
interface CopyConnection {
  query(text: string): void;
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
}

/** A value in COPY's text format (backslash, tab, newline and carriage return escaped; null as \N). */
function copyText(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  return String(value).replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

class CopyIn {
  private error: unknown = null;
  private resolve!: () => void;
  private reject!: (err: unknown) => void;
  readonly done = new Promise<void>((resolve, reject) => {
    this.resolve = resolve;
    this.reject = reject;
  });

  constructor(
    private readonly text: string,
    private readonly data: Buffer,
  ) {}

  submit(connection: CopyConnection): void {
    connection.query(this.text);
  }

  handleCopyInResponse(connection: CopyConnection): void {
    connection.sendCopyFromChunk(this.data);
    connection.endCopyFrom();
  }

  handleCommandComplete(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}

  handleError(err: unknown): void {
    this.error = err;
  }

  handleReadyForQuery(): void {
    if (this.error === null) this.resolve();
    else this.reject(this.error);
  }
}

/** Writes `rows` into `table` (quoted, qualified) with one COPY statement. */
export async function copyRows(client: pg.Client, table: string, columns: readonly string[], rows: ReadonlyArray<readonly unknown[]>): Promise<void> {
  const lines: string[] = [];
  for (const row of rows) lines.push(`${row.map(copyText).join('\t')}\n`);
  const copy = new CopyIn(`COPY ${table} (${columns.map((c) => `"${c}"`).join(', ')}) FROM STDIN`, Buffer.from(lines.join('')));
  client.query(copy as unknown as pg.QueryConfig);
  await copy.done;
}
