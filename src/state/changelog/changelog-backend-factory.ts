/** The `changelog` state backend: a wrapped backend's keyed state with every change logged; operator state is the wrapped backend's own. */
import { assert } from '../../core/assert.ts';
import type { KeyedBackendArgs, OperatorStateBackend, StateBackendFactory } from '../backend.ts';
import { CHANGELOG_STREAMS_ID, ChangelogKeyedStateBackend, type ChangelogSettings } from './changelog-keyed-backend.ts';

/** Creates changelog backends over the backends of `inner`. */
export class ChangelogStateBackendFactory implements StateBackendFactory {
  readonly name: string;

  constructor(
    private readonly inner: StateBackendFactory,
    private readonly settings: ChangelogSettings,
  ) {
    this.name = `changelog over ${inner.name}`;
  }

  createKeyedBackend(args: KeyedBackendArgs): ChangelogKeyedStateBackend {
    const services = args.services;
    assert(services !== undefined, () => `${args.uid}/${args.subtask}: the changelog backend needs the task's storage, clock and scheduler`);
    const streams = services.storage.streamFactory(CHANGELOG_STREAMS_ID);
    return new ChangelogKeyedStateBackend(
      this.inner.createKeyedBackend(args),
      this.settings,
      {
        streams,
        clock: services.clock,
        scheduler: services.scheduler,
        ...(services.runId === undefined ? {} : { runTag: services.runId }),
        ...(services.changelogShare === undefined ? {} : { share: services.changelogShare }),
      },
      `${args.uid}-${args.subtask}`,
    );
  }

  /** Operator state is small (positions, transactions): snapshotted whole by the wrapped backend each checkpoint, as Flink does. */
  createOperatorBackend(args: { uid: string; subtask: number }): OperatorStateBackend {
    return this.inner.createOperatorBackend(args);
  }
}
