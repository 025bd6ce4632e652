import { describe, expect, it } from 'vitest';
import { resolveOptions } from '../../../src/api/options.ts';
import { optionRejection } from '../../support/option-errors.ts';

describe('embedded backend options', () => {
  it('defaults: incremental on for the embedded backend, off (and refused) for heap', () => {
    const e = resolveOptions({ stateBackend: 'embedded' });
    expect(e.stateBackend).toEqual({ type: 'embedded', incremental: true, localDir: null, cacheEntriesMax: 100_000, incrementsShareMax: 1 });
    expect(resolveOptions({ stateBackend: 'embedded', incremental: false }).stateBackend).toMatchObject({ type: 'embedded', incremental: false });
    expect(resolveOptions({}).stateBackend).toEqual({ type: 'heap' });
  });

  it('names the option at fault', () => {
    const cases: Array<[object, string]> = [
      [{ incremental: true }, 'incremental'],
      [{ stateBackend: 'embedded', incremental: 'yes' }, 'incremental'],
      [{ embeddedState: { cacheEntriesMax: 10 } }, 'embeddedState'],
      [{ stateBackend: 'embedded', embeddedState: { cacheEntriesMax: 0 } }, 'embeddedState.cacheEntriesMax'],
      [{ stateBackend: 'embedded', embeddedState: { incrementsShareMax: 0 } }, 'embeddedState.incrementsShareMax'],
      [{ stateBackend: 'embedded', embeddedState: { localDir: '' } }, 'embeddedState.localDir'],
      [{ stateBackend: 'embedded', embeddedState: { cache: 5 } }, 'embeddedState.cache'],
      [{ stateBackend: 'rocksdb' }, 'stateBackend'],
    ];
    for (const [options, option] of cases) {
      expect(optionRejection(options).option, JSON.stringify(options)).toBe(option);
    }
  });
});
