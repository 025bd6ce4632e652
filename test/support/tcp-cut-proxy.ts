/**
 * A TCP proxy (on loopback unless told) in front of a real server (PostgreSQL, for the HA tests): bytes pass
 * unchanged; `cut()` destroys every connection open now (a server restart or a network cut, as the
 * client sees it), and `block(true)` also refuses new ones until `block(false)` (a partition).
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export class TcpCutProxy {
  /** Connections accepted so far. */
  connections = 0;
  private readonly open = new Set<Socket>();
  private blocked = false;

  private constructor(private readonly server: Server) {}

  /** A proxy listening on `listenHost` (default loopback; a test network's gateway for processes in network namespaces). */
  static async start(targetHost: string, targetPort: number, listenHost = '127.0.0.1'): Promise<TcpCutProxy> {
    const proxy: TcpCutProxy = new TcpCutProxy(
      createServer((client) => {
        if (proxy.blocked) {
          client.destroy();
          return;
        }
        proxy.connections++;
        const upstream = createConnection({ host: targetHost, port: targetPort });
        for (const s of [client, upstream]) {
          proxy.open.add(s);
          s.on('close', () => proxy.open.delete(s));
          s.on('error', () => {});
        }
        client.pipe(upstream);
        upstream.pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      }),
    );
    await new Promise<void>((resolve) => proxy.server.listen(0, listenHost, resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Destroys every open connection. */
  cut(): void {
    for (const s of [...this.open]) s.destroy();
  }

  /** While blocked, new connections are closed at once (and `cut` ends the open ones). */
  block(on: boolean): void {
    this.blocked = on;
    if (on) this.cut();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
