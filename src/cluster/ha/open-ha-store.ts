/**
 * Opens the HA store a URL names: PostgreSQL (`postgres://`, `postgresql://`) or etcd (`etcd://`),
 * each client loaded only when HA is asked for (both are optional peer dependencies).
 */
import { errorMessage, HaError } from '../../core/errors.ts';
import type { HaStore } from './ha-store.ts';
import { describeHaUrl, haStoreKind } from './ha-url.ts';

/** @throws HaError (HA_UNREACHABLE) naming the URL (password masked) when the store cannot be reached or the scheme is none of them. */
export async function openHaStore(url: string): Promise<HaStore> {
  switch (haStoreKind(url)) {
    case 'postgres': {
      const { PostgresHaStore } = await import('./postgres-ha-store.ts');
      return PostgresHaStore.open(url);
    }
    case 'etcd': {
      // etcd's client is an optional peer dependency, as PostgreSQL's driver is.
      const { EtcdHaStore } = await import('./etcd-ha-store.ts').catch((err: unknown) => {
        throw new HaError(
          'HA_UNREACHABLE',
          `the etcd HA store ${describeHaUrl(url)} needs etcd's client beside Weir: npm install etcd3 cockatiel (${errorMessage(err)})`,
          {
            cause: err,
          },
        );
      });
      return EtcdHaStore.open(url);
    }
    default:
      throw new HaError('HA_UNREACHABLE', `${describeHaUrl(url)} names no HA store: give postgres://user@host:port/db or etcd://host:port`);
  }
}
