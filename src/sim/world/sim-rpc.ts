/** Control messages in the simulation: delayed, and (triggers, acks, notifications) sometimes lost. */
import type { Rpc, RpcKind, TriggerAddress } from '../../runtime/rpc.ts';
import type { Random, Scheduler } from '../../core/time.ts';

export interface SimRpcOptions {
  readonly delayProbability: number;
  readonly delayMsMax: number;
  readonly lossProbability: number;
}

/** Kinds a real network may lose without the job's own failure detection noticing. */
const LOSABLE: ReadonlySet<RpcKind> = new Set(['trigger', 'ack', 'notify-complete', 'notify-aborted', 'decline']);

export class SimRpc implements Rpc {
  active = true;
  lost = 0;
  delayed = 0;
  /** Triggers delivered to a source subtask after the trigger of a newer checkpoint (the subtask must decline them). */
  staleTriggers = 0;
  private readonly newestTrigger = new Map<string, number>();
  constructor(
    /** The process's scheduler: messages of a dead process are never delivered. */
    private readonly scheduler: Scheduler,
    private readonly random: Random,
    private readonly options: SimRpcOptions,
  ) {}

  send(kind: RpcKind, send: () => void, trigger?: TriggerAddress): void {
    const r = this.random;
    const deliver = trigger ? () => this.deliverTrigger(trigger, send) : send;
    if (this.active && LOSABLE.has(kind) && r.next() < this.options.lossProbability) {
      this.lost++;
      return;
    }
    if (this.active && r.next() < this.options.delayProbability) {
      this.delayed++;
      this.scheduler.schedule(r.next() * this.options.delayMsMax, deliver);
      return;
    }
    this.scheduler.execute(deliver);
  }

  private deliverTrigger(t: TriggerAddress, deliver: () => void): void {
    const newest = this.newestTrigger.get(t.target) ?? -1;
    if (t.checkpointId < newest) this.staleTriggers++;
    else this.newestTrigger.set(t.target, t.checkpointId);
    deliver();
  }
}
