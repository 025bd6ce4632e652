/**
 * The option table: every option has a default and a doc line, and a wrong value of each is a
 * ConfigError naming it, walked from the table itself so a new option is covered without a new test.
 */
import { describe, expect, it } from 'vitest';
import { resolveOptions } from '../../src/api/options.ts';
import type { Field, Table } from '../../src/api/options/fields.ts';
import { OPTION_TABLE, SHORTHAND_TABLE } from '../../src/api/options/table.ts';
import { optionRejection } from '../support/option-errors.ts';

/** One option of the table: its path, its descriptor, and the options it is given within. */
interface Leaf {
  readonly path: string;
  readonly field: Field<unknown, unknown>;
  /** Builds the options that give `value` at this path (a union member's fields get the member's type). */
  readonly place: (value: unknown) => Record<string, unknown>;
}

function leaves(table: Table, prefix: string, place: (value: Record<string, unknown>) => Record<string, unknown>): Leaf[] {
  return Object.entries(table).flatMap(([key, field]) => {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    const here: Leaf = { path, field, place: (value) => place({ [key]: value }) };
    const inner =
      field.kind === 'group'
        ? leaves(field.fields!, path, (v) => here.place(v))
        : field.kind === 'union'
          ? Object.entries(field.members!).flatMap(([type, members]) =>
              leaves(members, path, (v) => here.place({ type, ...v })).map((l) => ({ ...l, path: `${l.path} (${type})` })),
            )
          : [];
    return [here, ...inner];
  });
}

const ALL = [
  ...leaves(OPTION_TABLE, '', (v) => v),
  // The embedded backend's shorthands only apply with it.
  ...leaves(SHORTHAND_TABLE, '', (v) => ('embeddedState' in v ? { stateBackend: 'embedded', ...v } : v)),
];

/** Values no option of this kind accepts. */
function wrongValues(field: Field<unknown, unknown>): unknown[] {
  switch (field.kind) {
    case 'int':
      return ['x', 1.5, -1];
    case 'number':
      return ['x', -1, Number.NaN];
    case 'boolean':
      return ['yes', 1];
    case 'enum':
      return ['nope', 5];
    case 'text':
      return [5, ''];
    case 'group':
      return [5, 'x', { nope: 1 }];
    case 'union':
      return [5, { type: 'nope' }, { type: Object.keys(field.members!)[0], nope: 1 }];
  }
}

describe('the option table', () => {
  it('covers every option of StreamEnvironmentOptions, shorthands included', () => {
    const top = ALL.filter((l) => !l.path.includes('.')).map((l) => l.path);
    expect(top).toEqual([...Object.keys(OPTION_TABLE), ...Object.keys(SHORTHAND_TABLE)]);
    expect(ALL.length).toBeGreaterThan(40);
  });

  it.each(ALL.map((l) => [l.path, l] as const))('%s has a doc line and a default that resolves', (_path, leaf) => {
    expect(leaf.field.doc.length).toBeGreaterThan(10);
    expect(leaf.field.defaultDoc.length).toBeGreaterThan(0);
    const name = leaf.path.replace(/ \(.*\)$/, '');
    if (leaf.field.required === true) {
      // A required field has no default: leaving it out is a ConfigError naming it.
      expect(leaf.field.defaultDoc).toBe('required');
      expect(() => leaf.field.resolve(undefined, name, {})).toThrow(`${name}: is required`);
    } else expect(() => leaf.field.resolve(undefined, name, {})).not.toThrow();
  });

  it.each(ALL.map((l) => [l.path, l] as const))('%s: a wrong value is a ConfigError naming it', (path, leaf) => {
    const name = path.replace(/ \(.*\)$/, '');
    for (const wrong of wrongValues(leaf.field)) {
      const err = optionRejection(leaf.place(wrong));
      // A group or union names itself, its `type`, or the unknown key inside it.
      expect(err.option === name || err.option.startsWith(`${name}.`), `${JSON.stringify(wrong)} -> ${err.message}`).toBe(true);
      expect(err.message.startsWith(`${err.option}: `)).toBe(true);
    }
  });

  it('an unknown option is named, with every known one listed', () => {
    const err = optionRejection({ paralelism: 2 });
    expect(err.option).toBe('paralelism');
    for (const key of [...Object.keys(OPTION_TABLE), ...Object.keys(SHORTHAND_TABLE)]) expect(err.message).toContain(key);
    expect(optionRejection({ cluster: { slots: 2 } }).message).toBe(
      'cluster.slots: unknown option (known: taskManagers, slotsPerTaskManager, heartbeat, cancellationTimeoutMs)',
    );
  });

  it('the defaults, all in one place', () => {
    expect(resolveOptions({})).toEqual({
      parallelism: 1,
      maxParallelism: 128,
      checkpointing: {
        intervalMs: null,
        mode: 'exactly-once',
        timeoutMs: 600_000,
        maxConcurrent: 1,
        minPauseMs: 0,
        tolerableFailures: 3,
        retained: 1,
        retainOnCancel: false,
        unaligned: false,
        alignedCheckpointTimeoutMs: 0,
      },
      stateBackend: { type: 'heap' },
      checkpointStorage: 'memory',
      s3: { forcePathStyle: false },
      restartStrategy: { type: 'failure-rate', maxFailures: 10, intervalMs: 300_000, delayMs: 1000 },
      bufferRecords: 512,
      channelCapacity: 8,
      remoteChannelCapacity: 32,
      autoWatermarkIntervalMs: 200,
      jobId: null,
      cluster: {
        taskManagers: null,
        slotsPerTaskManager: null,
        heartbeat: { intervalMs: 1000, timeoutMs: 10_000, startTimeoutMs: 30_000 },
        cancellationTimeoutMs: 10_000,
      },
      highAvailability: { type: 'none' },
    });
  });
});
