/** What `resolveOptions` refuses: the ConfigError it throws, for tests that assert which option it names. */
import { expect } from 'vitest';
import { resolveOptions, type StreamEnvironmentOptions } from '../../src/api/options.ts';
import { ConfigError } from '../../src/core/errors.ts';

/** The ConfigError `options` are refused with; fails the test when they are accepted or something else is thrown. */
export function optionRejection(options: unknown): ConfigError {
  try {
    resolveOptions(options as StreamEnvironmentOptions);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`accepted ${JSON.stringify(options)}`);
}
