/**
 * Task managers that joined over TCP as the pools of a job's attempts: a launch waits until enough
 * of them are ready (the number the user asked for at the first launch; afterwards, once their slots
 * hold the job and the survivors had a moment to register again), then assigns every ready one to a
 * new pool. Waiting says so ("waiting for task managers: 1 of 2 registered") and fails after the
 * registration timeout with a ClusterError naming the shortage. A pool's shutdown closes its
 * connections: the task managers stop what they ran and register again for the next pool.
 */
import { ClusterError } from '../../core/errors.ts';
import type { Environment } from '../../core/time.ts';
import type { ExecutionPlan } from '../../graph/execution-plan.ts';
import { placeOnSlots } from '../job-master/placement.ts';
import type { LaunchTaskManagers, TaskManagerPool } from '../job-master/remote-deployment.ts';
import type { Placement } from '../transport/protocol.ts';
import { formatAddress } from '../transport/address.ts';
import type { Registration, TaskManagerRegistry } from '../tcp/task-manager-registry.ts';

export interface TcpLaunchSettings {
  /** Task managers to wait for at the first launch (`--task-managers N`). */
  readonly expected: number;
  /** Slots the job needs: its highest parallelism. */
  readonly slotsNeeded: number;
  /** Milliseconds a launch waits for enough slots before it fails. */
  readonly registrationTimeoutMs: number;
  /** After the first launch: milliseconds to let task managers of the last pool register again before deploying on fewer than `expected`. */
  readonly settleMs: number;
  readonly log: (line: string) => void;
}

/** The launcher, and the placement of a plan on one of its pools (by the slots each member offers). */
export interface TcpTaskManagers {
  readonly launch: LaunchTaskManagers;
  readonly place: (plan: ExecutionPlan, pool: TaskManagerPool) => Placement;
}

export function tcpTaskManagers(registry: TaskManagerRegistry, env: Environment, s: TcpLaunchSettings): TcpTaskManagers {
  const slotsOf = new WeakMap<TaskManagerPool, readonly number[]>();
  let launches = 0;
  const launch: LaunchTaskManagers = () =>
    new Promise<TaskManagerPool>((resolve, reject) => {
      const first = launches++ === 0;
      // Set by the settle timer itself: comparing clocks when it fires can come out a hair short.
      let settled = false;
      let said = '';
      let done = false;
      const finish = (outcome: () => void): void => {
        if (done) return;
        done = true;
        unwatch();
        settle?.cancel();
        timeout.cancel();
        outcome();
      };
      const check = (): void => {
        if (done) return;
        const ready = registry.ready;
        const slots = ready.reduce((sum, r) => sum + r.registration.slots, 0);
        if (slots >= s.slotsNeeded && (ready.length >= s.expected || settled)) {
          finish(() => resolve(poolOf(ready)));
          return;
        }
        const line = waitingLine(ready.length, s.expected, slots, s.slotsNeeded, registry);
        if (line !== said) {
          said = line;
          s.log(line);
        }
      };
      const poolOf = (ready: readonly Registration[]): TaskManagerPool => {
        const assigned = registry.assign(ready.map((r) => r.name));
        const pool: TaskManagerPool = {
          links: assigned.links,
          onFailure: (handler) => assigned.onLost(handler),
          shutdown: () => assigned.release(),
          taskManagers: assigned.members.map((m) => ({
            host: m.registration.host,
            pid: m.registration.pid,
            slots: m.registration.slots,
            transport: 'tcp' as const,
            dataAddress: formatAddress(m.registration.dataHost, m.registration.dataPort),
          })),
        };
        slotsOf.set(
          pool,
          assigned.members.map((m) => m.registration.slots),
        );
        return pool;
      };
      const unwatch = registry.watch(check);
      const settle = first
        ? null
        : env.scheduler.schedule(s.settleMs, () => {
            settled = true;
            check();
          });
      const timeout = env.scheduler.schedule(s.registrationTimeoutMs, () =>
        finish(() => {
          const ready = registry.ready;
          const slots = ready.reduce((sum, r) => sum + r.registration.slots, 0);
          const address = formatAddress(registry.address.host, registry.address.port);
          reject(
            new ClusterError(
              'CLUSTER_SLOT_SHORTAGE',
              address,
              `${ready.length} of ${s.expected} task managers registered within ${s.registrationTimeoutMs} ms, offering ${slots} of the ${s.slotsNeeded} slots the job needs; start more with: weir taskmanager --connect ${address}`,
              registry.lastRefusal === null ? {} : { cause: registry.lastRefusal },
            ),
          );
        }),
      );
      check();
    });
  return {
    launch,
    place: (plan, pool) => {
      const slots = slotsOf.get(pool);
      if (slots === undefined) throw new Error('placement asked for a pool this launcher did not form');
      return placeOnSlots(plan, slots);
    },
  };
}

function waitingLine(ready: number, expected: number, slots: number, needed: number, registry: TaskManagerRegistry): string {
  const address = formatAddress(registry.address.host, registry.address.port);
  const slotPart = slots < needed ? `, ${slots} of ${needed} slots` : '';
  return `waiting for task managers: ${ready} of ${expected} registered${slotPart} (join with: weir taskmanager --connect ${address})`;
}
