/**
 * A link: one ordered, bidirectional message connection between two ends (job master and task
 * manager, or two task managers). Messages are plain data (structured-clone safe); a transport
 * only moves them. Implementations: in memory (through the scheduler, deterministic under the
 * simulator) and MessagePorts of worker threads; a TCP link would frame the same messages.
 */
import type { Scheduler } from '../../core/time.ts';

export interface Link<Out, In> {
  /** Sends a message; `transfer` lists ArrayBuffers whose ownership moves with it (not copied). */
  send(message: Out, transfer?: readonly ArrayBuffer[]): void;
  /** The one handler of incoming messages, in the order they were sent. */
  onMessage(handler: (message: In) => void): void;
  /** Stops delivering in both directions; messages in flight are dropped. */
  close(): void;
}

/**
 * Two ends of an in-memory link: each message is delivered later through the scheduler, never
 * inline, as if it crossed a thread. Objects are handed over as they are (the sender must not
 * touch them again, as with a transfer). Each direction is FIFO even on a scheduler that runs
 * ready events in any order (the simulator's): every send schedules one delivery, and a delivery
 * hands over the oldest message not yet delivered, so the scheduler picks when, never in what order.
 */
export function inMemoryLinkPair<A, B>(scheduler: Scheduler): [Link<A, B>, Link<B, A>] {
  const state = { closed: false };
  const handlers: { a: ((m: B) => void) | null; b: ((m: A) => void) | null } = { a: null, b: null };
  const end = <Out, In>(deliverTo: () => ((m: Out) => void) | null, setOwn: (h: (m: In) => void) => void): Link<Out, In> => {
    const queue: Out[] = [];
    let head = 0;
    const deliver = (): void => {
      if (state.closed) return;
      const message = queue[head] as Out;
      queue[head++] = undefined as Out; // let it go
      if (head === queue.length) {
        queue.length = 0;
        head = 0;
      }
      deliverTo()?.(message);
    };
    return {
      send: (message) => {
        if (state.closed) return;
        queue.push(message);
        scheduler.execute(deliver);
      },
      onMessage: setOwn,
      close: () => {
        state.closed = true;
        queue.length = 0;
        head = 0;
      },
    };
  };
  return [
    end<A, B>(
      () => handlers.b,
      (h) => (handlers.a = h),
    ),
    end<B, A>(
      () => handlers.a,
      (h) => (handlers.b = h),
    ),
  ];
}

/** What a MessagePort, a Worker and a worker's parentPort have in common. */
export interface PortLike {
  postMessage(value: unknown, transferList?: readonly ArrayBuffer[]): void;
  on(event: 'message', listener: (value: unknown) => void): unknown;
  off(event: 'message', listener: (value: unknown) => void): unknown;
  close?(): void;
}

/**
 * A link over a worker-thread port. Messages sent in one turn of the event loop (a subtask's step
 * sends a frame per buffer and a credit per few) go out together as one postMessage, at the end of
 * that turn (a microtask), with every frame's buffer in the transfer list: a postMessage costs
 * microseconds on each side, whatever it carries. Order is kept: each batch is an array, delivered
 * element by element.
 */
export function portLink<Out, In>(port: PortLike): Link<Out, In> {
  let listener: ((value: unknown) => void) | null = null;
  let closed = false;
  let batch: Out[] = [];
  let transfers: ArrayBuffer[] = [];
  const flush = (): void => {
    const messages = batch;
    const moved = transfers;
    batch = [];
    transfers = [];
    if (!closed && messages.length > 0) port.postMessage(messages, moved);
  };
  return {
    send: (message, transfer) => {
      if (closed) return;
      if (batch.length === 0) queueMicrotask(flush);
      batch.push(message);
      if (transfer) for (const buffer of transfer) transfers.push(buffer);
    },
    onMessage: (handler) => {
      if (listener) port.off('message', listener);
      listener = (value) => {
        const messages = value as In[];
        for (let i = 0; i < messages.length && !closed; i++) handler(messages[i]!);
      };
      port.on('message', listener);
    },
    close: () => {
      closed = true;
      batch = [];
      transfers = [];
      if (listener) port.off('message', listener);
      port.close?.();
    },
  };
}
