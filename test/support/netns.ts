/**
 * Hosts for the tests: Linux network namespaces joined by a bridge, each a "host" with an address
 * of the test network 10.77.<net>.0/24 (the job master's side, the bridge, is .1; host i is
 * .10+i). Processes started in a host see only its interface, so every byte between task managers
 * crosses a veth pair; `cut(i)` takes host i's link down (its connections stall, as a pulled cable
 * does) and `heal(i)` brings it back. The filesystem is shared (a shared checkpoint directory, as
 * issue 24 allows until S3). Needs root and iproute2; `netnsProblem()` says why not, for a skip.
 */
import { execFileSync } from 'node:child_process';

export interface TestHost {
  readonly ns: string;
  readonly address: string;
  /** The veth end on the bridge's side: down = cut off. */
  readonly link: string;
}

export interface TestNetwork {
  /** The bridge's address: where the job master (in the root namespace) listens. */
  readonly gateway: string;
  readonly hosts: readonly TestHost[];
  cut(i: number): void;
  heal(i: number): void;
  destroy(): void;
}

function ip(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Why namespaces cannot be made here, or null. */
export function netnsProblem(): string | null {
  if (process.platform !== 'linux') return `network namespaces need Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'network namespaces need root (ip netns add); the same scenarios run over loopback processes';
  try {
    ip('netns', 'list');
  } catch (err) {
    return `ip netns does not work here: ${(err as Error).message}`;
  }
  return null;
}

/** `count` hosts on a network of their own (`net` 1-254 keeps test files apart). */
export function createTestNetwork(net: number, count: number): TestNetwork {
  const tag = `w${net}`;
  const bridge = `${tag}br`;
  const gateway = `10.77.${net}.1`;
  const hosts: TestHost[] = [];
  const destroy = () => {
    for (const h of hosts) {
      try {
        ip('netns', 'del', h.ns);
      } catch {
        // already gone
      }
    }
    try {
      ip('link', 'del', bridge);
    } catch {
      // already gone
    }
  };
  // A test killed half-way may have left them behind.
  for (let i = 0; i < count; i++) hosts.push({ ns: `${tag}h${i}`, address: `10.77.${net}.${10 + i}`, link: `${tag}v${i}` });
  destroy();
  hosts.length = 0;
  try {
    ip('link', 'add', bridge, 'type', 'bridge');
    ip('addr', 'add', `${gateway}/24`, 'dev', bridge);
    ip('link', 'set', bridge, 'up');
    for (let i = 0; i < count; i++) {
      const h: TestHost = { ns: `${tag}h${i}`, address: `10.77.${net}.${10 + i}`, link: `${tag}v${i}` };
      hosts.push(h);
      ip('netns', 'add', h.ns);
      ip('link', 'add', h.link, 'type', 'veth', 'peer', 'name', `${tag}p${i}`);
      ip('link', 'set', `${tag}p${i}`, 'netns', h.ns);
      ip('link', 'set', h.link, 'master', bridge);
      ip('link', 'set', h.link, 'up');
      ip('-n', h.ns, 'link', 'set', 'lo', 'up');
      ip('-n', h.ns, 'addr', 'add', `${h.address}/24`, 'dev', `${tag}p${i}`);
      ip('-n', h.ns, 'link', 'set', `${tag}p${i}`, 'up');
      ip('-n', h.ns, 'route', 'add', 'default', 'via', gateway);
    }
  } catch (err) {
    destroy();
    throw err;
  }
  return {
    gateway,
    hosts,
    cut: (i) => void ip('link', 'set', hosts[i]!.link, 'down'),
    heal: (i) => void ip('link', 'set', hosts[i]!.link, 'up'),
    destroy,
  };
}
