/** The state backend union with its shorthands, and the cluster group with its top-level shorthands. */
import { describe, expect, it } from 'vitest';
import { resolveOptions, type StreamEnvironmentOptions } from '../../src/api/options.ts';
import { StreamEnvironment } from '../../src/api/environment.ts';
import { stateBackendFactory } from '../../src/api/executor.ts';
import { optionRejection } from '../support/option-errors.ts';
import { EmbeddedStateBackendFactory } from '../../src/state/embedded/embedded-backend-factory.ts';
import { HeapStateBackendFactory } from '../../src/state/heap/heap-backend-factory.ts';

const EMBEDDED_DEFAULTS = { type: 'embedded', incremental: true, localDir: null, cacheEntriesMax: 100_000, incrementsShareMax: 1 };

describe('stateBackend, a union on type', () => {
  it('resolves the object form, with the member defaults applied', () => {
    expect(resolveOptions({ stateBackend: { type: 'heap' } }).stateBackend).toEqual({ type: 'heap' });
    expect(resolveOptions({ stateBackend: { type: 'embedded' } }).stateBackend).toEqual(EMBEDDED_DEFAULTS);
    expect(resolveOptions({ stateBackend: { type: 'embedded', incremental: false, localDir: '/tmp/x', cacheEntriesMax: 5 } }).stateBackend).toEqual({
      ...EMBEDDED_DEFAULTS,
      incremental: false,
      localDir: '/tmp/x',
      cacheEntriesMax: 5,
    });
  });

  it('keeps the strings and the sibling options as shorthands for the same thing', () => {
    expect(resolveOptions({ stateBackend: 'heap' })).toEqual(resolveOptions({ stateBackend: { type: 'heap' } }));
    expect(resolveOptions({ stateBackend: 'embedded' })).toEqual(resolveOptions({ stateBackend: { type: 'embedded' } }));
    const long = resolveOptions({ stateBackend: { type: 'embedded', incremental: false, cacheEntriesMax: 50, incrementsShareMax: 2 } });
    const short = resolveOptions({ stateBackend: 'embedded', incremental: false, embeddedState: { cacheEntriesMax: 50, incrementsShareMax: 2 } });
    expect(short).toEqual(long);
    // Siblings also complete the object form, as long as no field is given twice.
    expect(resolveOptions({ stateBackend: { type: 'embedded', incremental: false }, embeddedState: { cacheEntriesMax: 50, incrementsShareMax: 2 } })).toEqual(
      long,
    );
    // incremental: false with the heap backend changes nothing, as before.
    expect(resolveOptions({ incremental: false }).stateBackend).toEqual({ type: 'heap' });
  });

  it.each([
    [{ stateBackend: 'rocks' }, 'stateBackend', "must be one of 'heap', 'embedded', 'changelog' or an object with a type, got \"rocks\""],
    [{ stateBackend: { type: 'rocks' } }, 'stateBackend.type', "must be one of 'heap', 'embedded', 'changelog', got \"rocks\""],
    [{ stateBackend: {} }, 'stateBackend.type', 'got undefined'],
    [{ stateBackend: { type: 'heap', cacheEntriesMax: 5 } }, 'stateBackend.cacheEntriesMax', 'unknown option (known: type)'],
    [{ stateBackend: { type: 'embedded', cacheEntriesMax: 0 } }, 'stateBackend.cacheEntriesMax', 'got 0'],
    [{ stateBackend: { type: 'embedded', incremental: 'yes' } }, 'stateBackend.incremental', 'true or false'],
    [{ stateBackend: { type: 'heap' }, incremental: true }, 'incremental', "need stateBackend: 'embedded'"],
    [{ stateBackend: { type: 'heap' }, embeddedState: {} }, 'embeddedState', "applies only to stateBackend: 'embedded'"],
    [{ stateBackend: { type: 'embedded', incremental: true }, incremental: false }, 'incremental', 'given twice: also as stateBackend.incremental'],
    [{ stateBackend: { type: 'embedded', localDir: '/a' }, embeddedState: { localDir: '/b' } }, 'embeddedState.localDir', 'given twice'],
    [{ stateBackend: 'embedded', embeddedState: { cacheEntriesMax: 0 } }, 'embeddedState.cacheEntriesMax', 'got 0'],
  ])('rejects %j naming %s', (options, option, detail) => {
    const err = optionRejection(options);
    expect(err.option).toBe(option);
    expect(err.message).toContain(detail);
  });

  it('each member builds its backend', () => {
    expect(stateBackendFactory(resolveOptions({ stateBackend: 'heap' }).stateBackend)).toBeInstanceOf(HeapStateBackendFactory);
    const embedded = stateBackendFactory(resolveOptions({ stateBackend: { type: 'embedded', incremental: false, cacheEntriesMax: 10 } }).stateBackend);
    expect(embedded).toBeInstanceOf(EmbeddedStateBackendFactory);
    expect((embedded as EmbeddedStateBackendFactory).options).toEqual({ incremental: false, cacheEntriesMax: 10, incrementsShareMax: 1 });
  });
});

describe('cluster settings, a group of their own', () => {
  it('resolves the group, and the top-level shorthands to the same', () => {
    const group = resolveOptions({ cluster: { taskManagers: 2, slotsPerTaskManager: 3, heartbeat: { intervalMs: 50 }, cancellationTimeoutMs: 70 } });
    expect(group.cluster).toEqual({
      taskManagers: 2,
      slotsPerTaskManager: 3,
      heartbeat: { intervalMs: 50, timeoutMs: 10_000, startTimeoutMs: 30_000 },
      cancellationTimeoutMs: 70,
    });
    expect(resolveOptions({ taskManagers: 2, slotsPerTaskManager: 3, heartbeat: { intervalMs: 50 }, cancellationTimeoutMs: 70 })).toEqual(group);
    expect(resolveOptions({ cluster: { taskManagers: 2 }, cancellationTimeoutMs: 70 }).cluster).toMatchObject({ taskManagers: 2, cancellationTimeoutMs: 70 });
    expect(resolveOptions({ cluster: { heartbeat: { intervalMs: 20_000 } } }).cluster.heartbeat).toEqual({
      intervalMs: 20_000,
      timeoutMs: 20_001,
      startTimeoutMs: 30_000,
    });
  });

  it.each([
    [{ cluster: 5 }, 'cluster', 'must be an object'],
    [{ cluster: { taskManagers: 0 } }, 'cluster.taskManagers', "must be an integer between 1 and 256 or 'in-thread', got 0"],
    [{ cluster: { heartbeat: { intervalMs: 100, timeoutMs: 100 } } }, 'cluster.heartbeat.timeoutMs', 'must be > cluster.heartbeat.intervalMs (100), got 100'],
    [{ heartbeat: { intervalMs: 100, timeoutMs: 100 } }, 'heartbeat.timeoutMs', 'must be > heartbeat.intervalMs (100), got 100'],
    [{ cluster: { taskManagers: 2 }, taskManagers: 3 }, 'taskManagers', 'given twice: also as cluster.taskManagers'],
    [{ taskManagers: 'workers' }, 'taskManagers', 'or \'in-thread\', got "workers"'],
  ])('rejects %j naming %s', (options, option, detail) => {
    const err = optionRejection(options);
    expect(err.option).toBe(option);
    expect(err.message).toContain(detail);
  });

  it('the executor places subtasks by the cluster group', () => {
    const job = (options: StreamEnvironmentOptions) => {
      const env = StreamEnvironment.create({ parallelism: 2, ...options });
      env.setJobModule('/nowhere/job.ts');
      env
        .fromElements(1, 2, 3)
        .map((n) => n)
        .uid('m')
        .print();
      return env.taskManagerCount();
    };
    expect(job({ cluster: { taskManagers: 'in-thread' } })).toMatchObject({ taskManagers: 0, why: "taskManagers: 'in-thread'" });
    expect(job({ cluster: { taskManagers: 3 } })).toMatchObject({ taskManagers: 3, why: 'taskManagers' });
    expect(job({ taskManagers: 3 })).toEqual(job({ cluster: { taskManagers: 3 } }));
  });
});

describe('highAvailability, a union on type', () => {
  const URL_WITH_PW = 'postgres://weir:s3cret-pw@db.example:5432/weir';

  it("defaults to 'none'; 'postgres' resolves with its defaults and keeps the URL as given", () => {
    expect(resolveOptions({}).highAvailability).toEqual({ type: 'none' });
    expect(resolveOptions({ highAvailability: { type: 'postgres', url: URL_WITH_PW } }).highAvailability).toEqual({
      type: 'postgres',
      url: URL_WITH_PW,
      job: null,
      leaseMs: 10_000,
    });
    expect(resolveOptions({ highAvailability: { type: 'postgres', url: 'postgresql://h/d', job: 'orders', leaseMs: 2000 } }).highAvailability).toEqual({
      type: 'postgres',
      url: 'postgresql://h/d',
      job: 'orders',
      leaseMs: 2000,
    });
  });

  it('a bad value is named, and a rejected URL never shows its password', () => {
    const missing = optionRejection({ highAvailability: { type: 'postgres' } });
    expect(missing.message).toBe('highAvailability.url: is required: a postgres:// or postgresql:// URL');
    const scheme = optionRejection({ highAvailability: { type: 'postgres', url: 'mysql://weir:s3cret-pw@db.example/weir' } });
    expect(scheme.option).toBe('highAvailability.url');
    expect(scheme.message).toContain("has scheme 'mysql:'");
    expect(scheme.message).toContain('mysql://weir:***@db.example/weir');
    expect(scheme.message).not.toContain('s3cret-pw');
    expect(optionRejection({ highAvailability: { type: 'postgres', url: 'not a url' } }).message).toBe(
      'highAvailability.url: is not a URL: (an unparsable URL)',
    );
    expect(optionRejection({ highAvailability: { type: 'postgres', url: URL_WITH_PW, leaseMs: 100 } }).message).toBe(
      'highAvailability.leaseMs: must be an integer >= 300, got 100',
    );
    expect(optionRejection({ highAvailability: { type: 'zookeeper', url: URL_WITH_PW } }).option).toBe('highAvailability.type');
    expect(optionRejection({ highAvailability: { type: 'none', url: URL_WITH_PW } }).option).toBe('highAvailability.url');
  });
});
