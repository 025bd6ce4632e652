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
  /**
   * Tells this end, once, that the connection ended without this end closing it: the other end
   * closed it or its process died (a FIN or RST), or it broke on the way. What was in flight is
   * dropped, as TCP drops what it had not delivered when a connection resets. Optional: a transport
   * that cannot tell leaves it out (a worker thread's death shows as the Worker's exit event).
   */
  onClose?(handler: (error: Error) => void): void;
}

/**
 * An end of an in-memory link. Besides a silent `close` (whoever calls it ends both sides itself:
 * a launcher shutting its task managers down), it can end the connection as a process or a network
 * does, so the ends learn it through `onClose`.
 */
export interface InMemoryLinkEnd<Out, In> extends Link<Out, In> {
  onClose(handler: (error: Error) => void): void;
  /** This end closes the connection (its process closed it, or died): only the other end learns it. */
  end(error: Error): void;
  /** The connection breaks (a reset): both ends learn it. */
  reset(error: Error): void;
}

/**
 * Two ends of an in-memory link: each message is delivered later through the scheduler, never
 * inline, as if it crossed a thread. Objects are handed over as they are (the sender must not
 * touch them again, as with a transfer). Each direction is FIFO even on a scheduler that runs
 * ready events in any order (the simulator's): every send schedules one delivery, and a delivery
 * hands over the oldest message not yet delivered, so the scheduler picks when, never in what order.
 * When the connection ends (`end`, `reset`) what is in flight either way is dropped, and each end
 * that learns it is told through the scheduler, after every message it was handed before.
 */
export function inMemoryLinkPair<A, B>(scheduler: Scheduler): [InMemoryLinkEnd<A, B>, InMemoryLinkEnd<B, A>] {
  const state = { closed: false };
  const handlers: { a: ((m: B) => void) | null; b: ((m: A) => void) | null } = { a: null, b: null };
  const closeHandlers: { a: ((error: Error) => void) | null; b: ((error: Error) => void) | null } = { a: null, b: null };
  const queues: { a: unknown[]; b: unknown[] } = { a: [], b: [] };
  const stop = (): void => {
    state.closed = true;
    queues.a.length = 0;
    queues.b.length = 0;
  };
  const tell = (side: 'a' | 'b', error: Error): void => scheduler.execute(() => closeHandlers[side]?.(error));
  const end = <Out, In>(own: 'a' | 'b', deliverTo: () => ((m: Out) => void) | null, setOwn: (h: (m: In) => void) => void): InMemoryLinkEnd<Out, In> => {
    const other = own === 'a' ? 'b' : 'a';
    const queue = queues[own] as Out[];
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
        stop();
        head = 0;
      },
      onClose: (handler) => (closeHandlers[own] = handler),
      end: (error) => {
        if (state.closed) return;
        stop();
        tell(other, error);
      },
      reset: (error) => {
        if (state.closed) return;
        stop();
        tell(own, error);
        tell(other, error);
      },
    };
  };
  return [
    end<A, B>(
      'a',
      () => handlers.b,
      (h) => (handlers.a = h),
    ),
    end<B, A>(
      'b',
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
