/**
 * The connections of in-memory task managers, modelled on TCP: every end can be held back (what
 * arrives waits, in order: a stalled data link, a partition), an end learns when its connection
 * ended (what was in flight is dropped, as a reset drops what TCP had not delivered), and a data
 * connection that broke is made again once both ends learned it, as task managers over TCP
 * connect again, so a pool kept for the next attempt has every data link.
 */
import type { Scheduler } from '../../core/time.ts';
import type { InMemoryLinkEnd, Link } from '../../runtime/network/link.ts';
import { inMemoryEncodedLinkPair } from '../transport/encoded-link.ts';
import type { ProtocolMessage } from '../transport/message-codec.ts';

/** Virtual ms to hold an end back, asked as a message arrives or as its task manager is told to cancel. */
export type StallMs = (cause: 'message' | 'cancel') => number;

/**
 * One end of a connection as its owner (a task manager, or the job master) sees it. An end that
 * learns its connection ended tells its owner (`onClose`) once nothing holds it back: a task
 * manager cut off by a partition learns at the heal what happened meanwhile.
 */
export class HoldableEnd<Out, In> implements Link<Out, In> {
  /** The connection; null once it ended (until a data connection is made again). */
  private inner: InMemoryLinkEnd<Out, In> | null = null;
  private readonly waiting: In[] = [];
  private holds = 0;
  private handler: ((message: In) => void) | null = null;
  private closeHandler: ((error: Error) => void) | null = null;
  /** How the connection ended, to tell the owner once nothing holds this end back. */
  private ended: Error | null = null;
  /** Closed on this side for good (a shutdown, or its process died): nothing goes in or out any more. */
  private closed = false;
  /** Called after the owner was told its connection ended. */
  told: (() => void) | null = null;

  constructor(
    private readonly scheduler: Scheduler,
    /** Data ends only: a stall drawn as each message arrives (the simulator's slow network); null draws nothing. */
    private readonly stallMs: StallMs | null = null,
  ) {}

  /** Takes a connection (again, for a data connection made anew). */
  attach(inner: InMemoryLinkEnd<Out, In>): void {
    this.inner = inner;
    inner.onMessage((m) => this.arrive(m));
    inner.onClose((error) => this.learn(error));
  }

  /** Whether messages go anywhere: connected, and not closed on this side. */
  get connected(): boolean {
    return this.inner !== null && !this.closed;
  }

  send(message: Out, transfer?: readonly ArrayBuffer[]): void {
    if (!this.closed) this.inner?.send(message, transfer);
  }

  onMessage(handler: (message: In) => void): void {
    this.handler = handler;
    this.release(); // what arrived before its owner listened
  }

  onClose(handler: (error: Error) => void): void {
    this.closeHandler = handler;
  }

  /** Closes both sides without telling anyone (the launcher ends both owners itself). */
  close(): void {
    this.closed = true;
    this.waiting.length = 0;
    this.inner?.close();
  }

  /** This side ends the connection (its process died, or its owner closed it): the other end learns it. */
  end(error: Error): void {
    this.closed = true;
    this.waiting.length = 0;
    this.inner?.end(error);
  }

  /** The connection breaks on the way: both ends learn it. */
  reset(error: Error): void {
    this.inner?.reset(error);
  }

  hold(): void {
    this.holds++;
  }

  unhold(): void {
    this.holds--;
    this.release();
  }

  /** Holds what arrives for `ms` virtual ms. */
  stall(ms: number): void {
    if (ms <= 0 || this.closed) return;
    this.holds++;
    this.scheduler.schedule(ms, () => {
      this.holds--;
      this.release();
    });
  }

  private arrive(message: In): void {
    if (this.closed) return;
    if (this.stallMs !== null) this.stall(this.stallMs('message'));
    this.waiting.push(message);
    this.release();
  }

  /** The connection ended: what waits here is dropped with what was in flight; the owner is told once nothing holds this end. */
  private learn(error: Error): void {
    if (this.closed) return;
    this.inner = null;
    this.waiting.length = 0;
    this.ended = error;
    this.release();
  }

  private release(): void {
    // Without a handler yet, what arrived waits for one (onMessage releases it): a message is never
    // dropped, and the loop never spins on a message it cannot hand over.
    while (this.holds === 0 && !this.closed && this.handler !== null && this.waiting.length > 0) this.handler(this.waiting.shift() as In);
    if (this.holds === 0 && !this.closed && this.ended !== null) {
      const error = this.ended;
      this.ended = null;
      this.closeHandler?.(error);
      this.told?.();
    }
  }
}

/**
 * The data connection between two task managers: one HoldableEnd at each, kept for the pool's
 * life. After it broke, a new one is made once both task managers were told (so nothing of the
 * new connection reaches a task manager still to learn the old one broke), unless `mayReconnect`
 * says no (the pool is down, or one of them is gone).
 */
export class DataConnection<T extends ProtocolMessage> {
  readonly ends: readonly [HoldableEnd<T, T>, HoldableEnd<T, T>];
  /** False from a break until the connection is made again. */
  private up = false;
  private told = 0;

  constructor(
    private readonly scheduler: Scheduler,
    stalls: readonly [StallMs, StallMs],
    private readonly mayReconnect: () => boolean,
  ) {
    this.ends = [new HoldableEnd<T, T>(scheduler, stalls[0]), new HoldableEnd<T, T>(scheduler, stalls[1])];
    for (const end of this.ends) end.told = () => this.toldOne();
    this.connect();
  }

  /** Breaks the connection (both ends learn it); false when it is not up. */
  reset(error: Error): boolean {
    if (!this.up || !this.ends[0].connected || !this.ends[1].connected) return false;
    this.up = false;
    this.ends[0].reset(error);
    return true;
  }

  private connect(): void {
    this.up = true;
    this.told = 0;
    const [a, b] = inMemoryEncodedLinkPair<T, T>(this.scheduler);
    this.ends[0].attach(a);
    this.ends[1].attach(b);
  }

  private toldOne(): void {
    if (++this.told === 2 && this.mayReconnect()) this.connect();
  }
}
