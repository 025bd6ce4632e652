/** The changelog backends a seed's processes created, so the run can count what they did (truncations, retried uploads). */
import type { StateBackendFactory } from '../../state/backend.ts';
import { ChangelogKeyedStateBackend } from '../../state/changelog/changelog-keyed-backend.ts';

export class ChangelogBackends {
  private readonly backends: ChangelogKeyedStateBackend[] = [];

  /** `inner` with every changelog backend it creates remembered. */
  wrap(inner: StateBackendFactory): StateBackendFactory {
    return {
      name: inner.name,
      createKeyedBackend: (args) => {
        const backend = inner.createKeyedBackend(args);
        if (backend instanceof ChangelogKeyedStateBackend) this.backends.push(backend);
        return backend;
      },
      createOperatorBackend: (args) => inner.createOperatorBackend(args),
    };
  }

  sum(figure: 'truncations' | 'retries'): number {
    let n = 0;
    for (const b of this.backends) n += b.changelogFigures()[figure];
    return n;
  }
}
