/** Runs a seeded world until a job's result settles (or virtual time runs out); tests of jobs on the virtual clock. */
import { yieldToEventLoop } from '../../src/core/adapters.ts';
import type { SimWorld } from '../../src/sim/world/sim-world.ts';

/** Steps `world` until `result` settled, nothing is left to run, or `maxVirtualMs` passed; whether it settled. */
export async function driveUntilSettled(world: SimWorld, result: Promise<unknown>, maxVirtualMs = 60_000): Promise<boolean> {
  let settled = false;
  result.finally(() => (settled = true)).catch(() => {});
  while (!settled && world.now() < maxVirtualMs) {
    const stepped = world.step();
    await yieldToEventLoop();
    if (!stepped && world.idle) break;
  }
  return settled;
}
