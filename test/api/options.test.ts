import { describe, expect, it } from 'vitest';
import { ConfigError, StreamEnvironment } from '../../src/index.ts';
import type { StreamEnvironmentOptions } from '../../src/index.ts';

function rejection(options: unknown): ConfigError {
  try {
    StreamEnvironment.create(options as StreamEnvironmentOptions);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('options were accepted');
}

describe('option validation', () => {
  it.each([
    [{ checkpointing: { intervalMs: -5 } }, 'checkpointing.intervalMs', '-5'],
    [{ parallelism: 200 }, 'parallelism', 'exceeds maxParallelism 128'],
    [{ parallelism: 8, maxParallelism: 4 }, 'parallelism', 'exceeds maxParallelism 4'],
    [{ checkpointing: { mode: 'exactly-twice' } }, 'checkpointing.mode', "'exactly-once', 'at-least-once'"],
    [{ parallelism: 0 }, 'parallelism', 'got 0'],
    [{ parallelism: 1.5 }, 'parallelism', 'integer'],
    [{ maxParallelism: 40000 }, 'maxParallelism', 'between 1 and 32768'],
    [{ checkpointing: { timeoutMs: 0 } }, 'checkpointing.timeoutMs', 'got 0'],
    [{ checkpointing: { retained: 0 } }, 'checkpointing.retained', 'got 0'],
    [{ checkpointing: { retention: 'forever' } }, 'checkpointing.retention', "'retain-on-cancel'"],
    [{ checkpointing: { intervalMS: 100 } }, 'checkpointing.intervalMS', 'unknown option'],
    [{ paralelism: 2 }, 'paralelism', 'unknown option'],
    [{ restartStrategy: { type: 'sometimes' } }, 'restartStrategy.type', "'fixed-delay'"],
    [{ restartStrategy: { type: 'fixed-delay', attempts: -1 } }, 'restartStrategy.attempts', 'got -1'],
    [{ restartStrategy: { type: 'exponential-delay', initialDelayMs: 100, maxDelayMs: 10 } }, 'restartStrategy.maxDelayMs', '>= initialDelayMs'],
    [{ checkpointStorage: '' }, 'checkpointStorage', "'memory' or a directory"],
    [{ checkpointStorage: 'gs://bucket/x' }, 'checkpointStorage', "unsupported URL scheme 'gs:'"],
    [{ checkpointStorage: 's3://Bucket_1/x' }, 'checkpointStorage', 'bucket name "Bucket_1" is not valid'],
    [{ s3: { forcePathStyle: 'yes' } }, 's3.forcePathStyle', 'must be true or false'],
    [{ checkpointStorage: 'HTTPS://host/x' }, 'checkpointStorage', "unsupported URL scheme 'https:'"],
    [{ checkpointStorage: 'file://other-host/x' }, 'checkpointStorage', 'invalid file: location'],
    [{ stateBackend: 'rocks' }, 'stateBackend', "'heap'"],
    [{ jobId: '../escape' }, 'jobId', 'letters, digits'],
    [{ remoteChannelCapacity: 0 }, 'remoteChannelCapacity', 'got 0'],
  ])('rejects %j naming %s', (options, option, detail) => {
    const err = rejection(options);
    expect(err.option).toBe(option);
    expect(err.message.startsWith(`${option}: `)).toBe(true);
    expect(err.message).toContain(detail);
  });

  it('accepts a full valid configuration', () => {
    const env = StreamEnvironment.create({
      parallelism: 4,
      maxParallelism: 64,
      checkpointing: {
        intervalMs: 1000,
        mode: 'at-least-once',
        timeoutMs: 5000,
        maxConcurrent: 2,
        minPauseMs: 100,
        tolerableFailures: 0,
        retained: 3,
        retention: 'retain-on-cancel',
      },
      restartStrategy: { type: 'exponential-delay', attempts: 5, initialDelayMs: 10, maxDelayMs: 1000, multiplier: 3 },
      checkpointStorage: '/tmp/x',
    });
    expect(env.options.checkpointing.maxConcurrent).toBe(2);
    expect(env.options.restartStrategy).toEqual({ type: 'exponential-delay', attempts: 5, initialDelayMs: 10, maxDelayMs: 1000, multiplier: 3 });
  });

  it('a channel between task managers holds 4 x channelCapacity buffers unless set', () => {
    expect(StreamEnvironment.create({}).options.remoteChannelCapacity).toBe(32);
    expect(StreamEnvironment.create({ channelCapacity: 2 }).options.remoteChannelCapacity).toBe(8);
    expect(StreamEnvironment.create({ channelCapacity: 2, remoteChannelCapacity: 3 }).options.remoteChannelCapacity).toBe(3);
  });
});
