/**
 * Combines the watermarks and idleness of a subtask's input channels into the operator's input
 * watermark: the minimum over the active channels, only ever increasing. An idle channel does not
 * hold the watermark back. A channel that becomes active again rejoins the minimum only once its
 * own watermark caught up with the combined one, so a rejoining channel that is behind never
 * moves the combined watermark backwards (its records are late until then). Pure: no I/O.
 */
import { MIN_WATERMARK } from '../../core/watermark.ts';

/** What one input element changed: a new combined watermark and/or a new combined idleness. */
export interface ValveOutput {
  /** The combined watermark advanced to this, or null. */
  readonly watermarkMs: number | null;
  /** The subtask's inputs all became idle (true) or one became active again (false), or null. */
  readonly idle: boolean | null;
}

const NOTHING: ValveOutput = { watermarkMs: null, idle: null };

export class WatermarkValve {
  private readonly watermarks: number[];
  private readonly idle: boolean[];
  /** Active channels whose watermark reached the combined one: they count in the minimum. */
  private readonly aligned: boolean[];
  private combined = MIN_WATERMARK;
  private allIdle = false;

  constructor(channels: number) {
    this.watermarks = new Array<number>(channels).fill(MIN_WATERMARK);
    this.idle = new Array<boolean>(channels).fill(false);
    this.aligned = new Array<boolean>(channels).fill(true);
  }

  /** The combined watermark so far. */
  get watermarkMs(): number {
    return this.combined;
  }

  /** Whether every channel is idle. */
  get isIdle(): boolean {
    return this.allIdle;
  }

  /** Channel `ch` sent watermark `ms`. A watermark is also activity: an idle channel turns active. */
  inputWatermark(ch: number, ms: number): ValveOutput {
    let becameActive: boolean | null = null;
    if (this.idle[ch]) {
      const status = this.inputStatus(ch, false);
      becameActive = status.idle;
    }
    if (ms > this.watermarks[ch]!) this.watermarks[ch] = ms;
    if (!this.aligned[ch] && this.watermarks[ch]! >= this.combined) this.aligned[ch] = true;
    const advanced = this.advance();
    if (becameActive === null && advanced === null) return NOTHING;
    return { watermarkMs: advanced, idle: becameActive };
  }

  /** Channel `ch` went idle or active. */
  inputStatus(ch: number, idle: boolean): ValveOutput {
    if (this.idle[ch] === idle) return NOTHING;
    this.idle[ch] = idle;
    if (idle) {
      this.aligned[ch] = false;
      const advanced = this.advance();
      const nowAllIdle = this.idle.every(Boolean);
      const idleChanged = nowAllIdle !== this.allIdle ? nowAllIdle : null;
      this.allIdle = nowAllIdle;
      return advanced === null && idleChanged === null ? NOTHING : { watermarkMs: advanced, idle: idleChanged };
    }
    // Rejoining: counts in the minimum only once caught up with what was already emitted.
    this.aligned[ch] = this.watermarks[ch]! >= this.combined;
    const wasAllIdle = this.allIdle;
    this.allIdle = false;
    return wasAllIdle ? { watermarkMs: null, idle: false } : NOTHING;
  }

  /** The new combined watermark if the minimum over aligned active channels grew, else null. */
  private advance(): number | null {
    let min = Number.POSITIVE_INFINITY;
    let any = false;
    for (let ch = 0; ch < this.watermarks.length; ch++) {
      if (this.idle[ch] || !this.aligned[ch]) continue;
      any = true;
      const w = this.watermarks[ch]!;
      if (w < min) min = w;
    }
    if (!any || min <= this.combined) return null;
    this.combined = min;
    return min;
  }
}
