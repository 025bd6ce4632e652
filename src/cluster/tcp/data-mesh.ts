/**
 * A task manager process's data connections: one TCP connection per pair of task managers in a
 * pool, multiplexing every channel between them (a `DataMessage` names its channel). The task
 * manager with the higher index dials each peer with a lower index; the lower one accepts on its
 * data listener, which authenticates like every connection (handshake.ts) and learns from the
 * hello which pool and which peer it is. A connection of an older pool is closed as soon as a
 * newer pool's assignment arrives, so no frame of an old attempt reaches a new one.
 */
import { wallTimer } from '../../core/adapters.ts';
import { ClusterError } from '../../core/errors.ts';
import type { FramedSocket } from '../transport/framing.ts';
import { dialPeer, listenPeers, type ListenSettings, type PeerListener } from '../transport/handshake.ts';
import type { DataMessage } from '../transport/protocol.ts';
import { socketLink, type SocketLink } from '../transport/socket-link.ts';
import type { DataHello, PeerAddress } from './session-messages.ts';

export interface DataMeshSettings extends ListenSettings {
  readonly log: (line: string) => void;
}

/** The data links of one pool, by peer index. */
export type PeerLinks = Map<number, SocketLink<DataMessage, DataMessage>>;

export class DataMesh {
  /** Accepted connections by pool, then by the dialing peer's index. */
  private readonly inbound = new Map<number, Map<number, FramedSocket>>();
  private readonly arrivals = new Set<() => void>();
  /** The newest pool this task manager was assigned to: connections of older ones are closed. */
  private current = 0;

  private constructor(
    private readonly settings: DataMeshSettings,
    private listener: PeerListener | null,
  ) {}

  static async listen(settings: DataMeshSettings): Promise<DataMesh> {
    const mesh = new DataMesh(settings, null);
    mesh.listener = await listenPeers({
      ...settings,
      admit: (hello) => {
        if (hello.role !== 'data') return { refuse: 'a task manager takes data connections only; control connections go to the job master' };
        const { pool, from } = hello.body as Partial<DataHello>;
        if (typeof pool !== 'number' || typeof from !== 'number') return { refuse: 'a data connection must name its pool and peer' };
        if (pool < mesh.current) return { refuse: `pool ${pool} is over (this task manager is in pool ${mesh.current})` };
        return { welcome: {} };
      },
      onPeer: (framed, hello) => mesh.accepted(framed, hello.body as unknown as DataHello),
      onRefused: (remote, reason) => settings.log(`data connection from ${remote} refused: ${reason}`),
    });
    return mesh;
  }

  /** The bound data address (its port, when 0 was asked for). */
  get port(): number {
    return this.listener!.port;
  }

  /**
   * The data links of pool `pool` for the task manager at `index`: dials every peer with a lower
   * index, waits for every peer with a higher one to dial in.
   * @throws ClusterError (CLUSTER_UNREACHABLE) naming a peer that could not be reached or did not dial in within `timeoutMs`.
   */
  async connect(pool: number, index: number, peers: readonly PeerAddress[], timeoutMs: number): Promise<PeerLinks> {
    this.current = Math.max(this.current, pool);
    for (const [p, sockets] of this.inbound) {
      if (p < pool) {
        for (const framed of sockets.values()) framed.close();
        this.inbound.delete(p);
      }
    }
    const links: PeerLinks = new Map();
    const dialed = peers
      .filter((p) => p.index < index)
      .map(async (p) => {
        const body: DataHello = { pool, from: index };
        const { framed } = await dialPeer({
          host: p.host,
          port: p.port,
          token: this.settings.token,
          tls: this.settings.tls,
          role: 'data',
          body: body as unknown as Record<string, unknown>,
          weirVersion: this.settings.weirVersion,
          timeoutMs,
        });
        links.set(p.index, socketLink<DataMessage, DataMessage>(framed));
      });
    const awaited = peers.filter((p) => p.index > index).map((p) => this.accept(pool, p, timeoutMs).then((framed) => links.set(p.index, socketLink(framed))));
    try {
      await Promise.all([...dialed, ...awaited]);
    } catch (err) {
      for (const link of links.values()) link.close();
      throw err;
    }
    return links;
  }

  async close(): Promise<void> {
    for (const sockets of this.inbound.values()) for (const framed of sockets.values()) framed.close();
    this.inbound.clear();
    const l = this.listener;
    this.listener = null;
    await l?.close();
  }

  private accepted(framed: FramedSocket, hello: DataHello): void {
    if (hello.pool < this.current) {
      framed.close();
      return;
    }
    let sockets = this.inbound.get(hello.pool);
    if (sockets === undefined) this.inbound.set(hello.pool, (sockets = new Map()));
    sockets.get(hello.from)?.close();
    sockets.set(hello.from, framed);
    for (const arrived of [...this.arrivals]) arrived();
  }

  /** The connection peer `peer` dials in for `pool`, once it is there. */
  private accept(pool: number, peer: PeerAddress, timeoutMs: number): Promise<FramedSocket> {
    return new Promise((resolve, reject) => {
      const take = (): boolean => {
        const framed = this.inbound.get(pool)?.get(peer.index);
        if (framed === undefined) return false;
        this.inbound.get(pool)!.delete(peer.index);
        resolve(framed);
        return true;
      };
      if (take()) return;
      const arrived = (): void => {
        if (!take()) return;
        this.arrivals.delete(arrived);
        timer.cancel();
      };
      const timer = wallTimer(timeoutMs, () => {
        this.arrivals.delete(arrived);
        reject(
          new ClusterError(
            'CLUSTER_UNREACHABLE',
            `task manager ${peer.index} (${peer.host}:${peer.port})`,
            `it did not open its data connection within ${timeoutMs} ms`,
          ),
        );
      });
      this.arrivals.add(arrived);
    });
  }
}
