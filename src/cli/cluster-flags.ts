/**
 * The flags every cluster command shares (`weir run --listen`, `weir taskmanager`): the join token,
 * TLS certificates, `--insecure`, and `host:port` addresses. The token comes from `--token-file`,
 * else `WEIR_CLUSTER_TOKEN`; `weir run` on its own host may create one in the user's private
 * registry directory (mode 0600), which `weir taskmanager` on the same host then finds by itself.
 */
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateClusterToken, loadClusterToken } from '../cluster/transport/cluster-token.ts';
import { loadTlsSettings, type TlsSettings } from '../cluster/transport/tls-settings.ts';
import { UsageError } from './exit.ts';
import { ensureRegistryDir } from './registry-dir.ts';

export interface ClusterFlags {
  readonly tokenFile?: string;
  readonly tlsCert?: string;
  readonly tlsKey?: string;
  readonly tlsCa?: string;
  readonly insecure?: boolean;
}

/** Where `weir run` keeps the token it created, for task managers on this host. */
export function localTokenFile(): string {
  return join(ensureRegistryDir(), 'cluster-token');
}

/** The token the flags and environment give, or (with `create`) the local token file's, made if missing. */
export function clusterToken(flags: ClusterFlags, create: boolean): { readonly token: string; readonly source: string } {
  const given = loadClusterToken({ tokenFile: flags.tokenFile ?? null, env: process.env });
  if (given !== null) return { token: given, source: flags.tokenFile ?? '$WEIR_CLUSTER_TOKEN' };
  const file = localTokenFile();
  if (!existsSync(file)) {
    if (!create) throw new UsageError(`no cluster token: give --token-file, or set WEIR_CLUSTER_TOKEN (the job master's token; on its host it is in ${file})`);
    writeFileSync(file, `${generateClusterToken()}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  }
  const token = loadClusterToken({ tokenFile: file, env: {} });
  if (token === null) throw new UsageError(`${file} holds no cluster token`);
  return { token, source: file };
}

export function tlsOf(flags: ClusterFlags): TlsSettings | null {
  return loadTlsSettings({ certFile: flags.tlsCert ?? null, keyFile: flags.tlsKey ?? null, caFile: flags.tlsCa ?? null });
}

/** `host:port` (IPv6 in brackets); `what` names the flag in the error. */
export function parseAddress(value: string, what: string): { readonly host: string; readonly port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new UsageError(`${what} must be host:port (for example 127.0.0.1:6123), got ${JSON.stringify(value)}`);
  return { host: m[1] ?? m[2]!, port };
}
