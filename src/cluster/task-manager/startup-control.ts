/**
 * The control link of a task manager while its thread starts: it says hello at once and answers heartbeats while the job module loads, holding every other
 * message until the task manager takes the link over. So the job master watches the task manager
 * from its first moment of running, and loading a module that hangs is silence like any other.
 */
import type { Clock } from '../../core/time.ts';
import { preciseWallNow } from '../../core/wall-time.ts';
import type { Link } from '../../runtime/network/link.ts';
import type { ToJobMaster, ToTaskManager } from '../transport/protocol.ts';

/** `clock`: the task manager's own (its answers carry its wall clock, for the job master's clock-offset estimate). */
export function answerHeartbeatsUntilReady(link: Link<ToJobMaster, ToTaskManager>, clock: Clock): Link<ToJobMaster, ToTaskManager> {
  // Holds the few control messages sent before the task manager runs (deploy, perhaps cancel).
  const held: ToTaskManager[] = [];
  let handler: ((message: ToTaskManager) => void) | null = null;
  link.onMessage((m) => {
    if (handler !== null) handler(m);
    else if (m.type === 'heartbeat') link.send({ type: 'heartbeat', epoch: m.epoch, seq: m.seq, at: preciseWallNow(clock) });
    else held.push(m);
  });
  link.send({ type: 'hello' });
  return {
    send: (message, transfer) => link.send(message, transfer),
    onMessage: (h) => {
      handler = h;
      for (const m of held.splice(0)) h(m);
    },
    close: () => link.close(),
    ...(link.onClose ? { onClose: (h: (error: Error) => void) => link.onClose?.(h) } : {}),
  };
}
