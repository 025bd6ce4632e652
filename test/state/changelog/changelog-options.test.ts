import { describe, expect, it } from 'vitest';
import { resolveOptions } from '../../../src/api/options.ts';
import { optionRejection } from '../../support/option-errors.ts';

const DEFAULTS = {
  uploadBytesThreshold: 10 * 1024 * 1024,
  uploadDelayMs: 10,
  inFlightBytesMax: 100 * 1024 * 1024,
  uploadAttemptsMax: 3,
  uploadTimeoutMs: 10_000,
  materializationIntervalMs: 600_000,
  materializationLogShareMax: 1,
};

describe('changelog backend options', () => {
  it("resolves the shorthand over heap, and 'over' as a string or an object", () => {
    expect(resolveOptions({ stateBackend: 'changelog' }).stateBackend).toEqual({ type: 'changelog', over: { type: 'heap' }, ...DEFAULTS });
    expect(resolveOptions({ stateBackend: { type: 'changelog', over: 'embedded', materializationIntervalMs: 50 } }).stateBackend).toEqual({
      type: 'changelog',
      // The wrapped embedded backend's chain is kept shorter than the embedded backend's own default (1).
      over: { type: 'embedded', incremental: true, localDir: null, cacheEntriesMax: 100_000, incrementsShareMax: 0.25 },
      ...DEFAULTS,
      materializationIntervalMs: 50,
    });
    expect(resolveOptions({ stateBackend: 'embedded' }).stateBackend).toMatchObject({ type: 'embedded', incrementsShareMax: 1 });
    expect(resolveOptions({ stateBackend: { type: 'changelog', over: { type: 'embedded', incrementsShareMax: 2 } } }).stateBackend).toMatchObject({
      over: { type: 'embedded', incrementsShareMax: 2 },
    });
    expect(resolveOptions({ stateBackend: { type: 'changelog', over: { type: 'embedded', incremental: false } } }).stateBackend).toMatchObject({
      over: { type: 'embedded', incremental: false },
    });
  });

  it('names the option at fault', () => {
    const cases: Array<[object, string, RegExp]> = [
      [{ stateBackend: { type: 'changelog', over: 'changelog' } }, 'stateBackend.over', /must be one of 'heap', 'embedded'/],
      [{ stateBackend: { type: 'changelog', over: { type: 'lsm' } } }, 'stateBackend.over.type', /must be one of 'heap', 'embedded'/],
      [{ stateBackend: { type: 'changelog', uploadDelayMs: -1 } }, 'stateBackend.uploadDelayMs', /./],
      [{ stateBackend: { type: 'changelog', uploadAttemptsMax: 0 } }, 'stateBackend.uploadAttemptsMax', /./],
      [{ stateBackend: { type: 'changelog', materializationInterval: 5 } }, 'stateBackend.materializationInterval', /./],
      [{ stateBackend: { type: 'changelog', materializationLogShareMax: 0 } }, 'stateBackend.materializationLogShareMax', /./],
      [{ stateBackend: 'changelog', incremental: true }, 'incremental', /stateBackend: 'embedded'/],
    ];
    for (const [options, option, message] of cases) {
      const error = optionRejection(options);
      expect(error.option, JSON.stringify(options)).toBe(option);
      expect(error.message).toMatch(message);
    }
  });
});
