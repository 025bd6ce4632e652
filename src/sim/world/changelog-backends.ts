/** The changelog backends a seed's processes created, so the run can count what they did (truncations, retried uploads). */
import type { StateBackendFactory } from '../../state/backend.ts';
import { ChangelogKeyedStateBackend } from '../../state/changelog/changelog-keyed-backend.ts';

export class ChangelogBackends {
  private readonly backends: ChangelogKeyedStateBackend[] = [];
  /** Told when a materialization of any backend starts (the run's kill point during a materialization). */
  onMaterializationStart: (() => void) | null = null;
  /** Backends of processes already killed: a dead process's materialization never finishes. */
  private readonly killed = new Set<ChangelogKeyedStateBackend>();

  /** `inner` with every changelog backend it creates remembered. */
  wrap(inner: StateBackendFactory): StateBackendFactory {
    return {
      name: inner.name,
      createKeyedBackend: (args) => {
        const backend = inner.createKeyedBackend(args);
        if (backend instanceof ChangelogKeyedStateBackend) {
          this.backends.push(backend);
          backend.onMaterializationStart = () => this.onMaterializationStart?.();
        }
        return backend;
      },
      createOperatorBackend: (args) => inner.createOperatorBackend(args),
    };
  }

  /** The process dies: whether a materialization of one of its backends was under way (the crash the issue names); its backends count as dead from now. */
  kill(): boolean {
    let during = false;
    for (const b of this.backends) {
      if (this.killed.has(b)) continue;
      if (b.materializing) during = true;
      this.killed.add(b);
    }
    return during;
  }

  sum(figure: 'truncations' | 'retries'): number {
    let n = 0;
    for (const b of this.backends) n += b.changelogFigures()[figure];
    return n;
  }
}
