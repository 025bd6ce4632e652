/**
 * Private servers in child processes, for tests that stop and restart a server: the shared ones on
 * the default ports serve every other test and engineer, so a restart test runs its own instance
 * on a free loopback port, with its data in a temporary directory that survives the restart.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createServer, Socket } from 'node:net';
import { tempDir } from './jobs.ts';

/** A free TCP port on 127.0.0.1 (free when asked; the server binds it right after). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1');
  });
}

/** A server process that can be killed and started again on the same port and data directory. */
/** Why a private `command` server cannot run here (its binary is not installed), or null. */
export function serverProblem(command: string, pkg: string): string | null {
  try {
    execFileSync(command, ['--version'], { stdio: 'ignore' });
    return null;
  } catch {
    return `${command} is not installed (apt-get install ${pkg})`;
  }
}

export class PrivateServer {
  private child: ChildProcess | null = null;
  readonly dir = tempDir('weir-server-');

  private constructor(
    readonly port: number,
    private readonly command: string,
    private readonly args: (port: number, dir: string) => string[],
  ) {}

  /** redis-server with an append-only file fsynced on every write, so a restart keeps the streams. */
  static async redis(extraArgs: string[] = []): Promise<PrivateServer> {
    const server = new PrivateServer(await freePort(), 'redis-server', (port, dir) => [
      '--bind',
      '127.0.0.1',
      '--port',
      String(port),
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      ...extraArgs,
    ]);
    await server.start();
    return server;
  }

  /** nats-server with JetStream storing in its own directory, so a restart keeps the streams. */
  static async nats(extraArgs: string[] = []): Promise<PrivateServer> {
    const server = new PrivateServer(await freePort(), 'nats-server', (port, dir) => ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir, ...extraArgs]);
    await server.start();
    return server;
  }

  /** A single-member etcd (Debian's etcd-server) with its data in its own directory; its peer port is another free one. */
  static async etcd(): Promise<PrivateServer> {
    const peer = await freePort();
    const server = new PrivateServer(await freePort(), 'etcd', (port, dir) => [
      '--name',
      'weir-test',
      '--data-dir',
      dir,
      '--listen-client-urls',
      `http://127.0.0.1:${port}`,
      '--advertise-client-urls',
      `http://127.0.0.1:${port}`,
      '--listen-peer-urls',
      `http://127.0.0.1:${peer}`,
      '--initial-advertise-peer-urls',
      `http://127.0.0.1:${peer}`,
      '--initial-cluster',
      `weir-test=http://127.0.0.1:${peer}`,
    ]);
    await server.start();
    // Accepting connections comes before the single member has elected itself: wait until it says it is healthy.
    for (let i = 0; ; i++) {
      const health = await fetch(`http://127.0.0.1:${server.port}/health`)
        .then((r) => r.json() as Promise<{ health?: string }>)
        .catch(() => ({ health: 'false' }));
      if (health.health === 'true') return server;
      if (i === 300) throw new Error(`etcd on port ${server.port} did not become healthy`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Starts the process and resolves once it accepts connections. */
  async start(): Promise<void> {
    this.child = spawn(this.command, this.args(this.port, this.dir), { stdio: 'ignore' });
    for (let i = 0; i < 500; i++) {
      if (await accepting(this.port)) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`${this.command} did not accept connections on port ${this.port}`);
  }

  /** Kills the process (SIGKILL: no goodbye to clients) and resolves once it exited. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (child === null || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }

  /** Kills and starts again on the same port and data. */
  async restart(): Promise<void> {
    await this.kill();
    await this.start();
  }
}
