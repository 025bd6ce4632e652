/**
 * The Nexmark source: the generator's events 0 .. events-1 read through the checkpointed indexed
 * source, so event numbers are split over subtasks (subtask s of p reads s, s+p, ...), each split's
 * next number is operator state (a restore rewinds exactly; a rescale redistributes the splits), and
 * `ratePerSec` paces emission through the job's clock. Within a split, event times only increase.
 */
import { IndexedSource } from '../generator/indexed-source.ts';
import type { Source, SourceReader } from '../../runtime/source.ts';
import { type NexmarkConfig, type NexmarkOptions, resolveNexmarkConfig } from './config.ts';
import { NexmarkGenerator } from './generator.ts';
import type { NexmarkEvent } from './model.ts';

/** A deterministic, checkpointed source of Nexmark events (see the module comment). */
export class NexmarkSource implements Source<NexmarkEvent> {
  /** Display name of the source operator. */
  readonly name = 'nexmark';
  /** Whether `events` is finite. */
  readonly bounded: boolean;
  private readonly config: NexmarkConfig;

  /**
   * A source of `options.events` events.
   * @throws ConfigError naming the first option at fault.
   */
  constructor(options: NexmarkOptions) {
    this.config = resolveNexmarkConfig(options);
    this.bounded = Number.isFinite(this.config.events);
  }

  /** A reader for one subtask and attempt, with its own generator. */
  createReader(): SourceReader<NexmarkEvent> {
    const generator = new NexmarkGenerator(this.config);
    const options = this.config.ratePerSec === undefined ? { count: this.config.events } : { count: this.config.events, ratePerSec: this.config.ratePerSec };
    return new IndexedSource(this.name, options, (i) => generator.event(i)).createReader();
  }
}

/**
 * The first `count` Nexmark events for `options` (all of them when `count` is omitted and
 * `options.events` is finite), in event-number order: for reference computations and tests.
 * @throws ConfigError naming the first option at fault.
 */
export function nexmarkEvents(options: NexmarkOptions, count = options.events): NexmarkEvent[] {
  const generator = new NexmarkGenerator(resolveNexmarkConfig(options));
  const events: NexmarkEvent[] = [];
  for (let i = 0; i < count; i++) events.push(generator.event(i));
  return events;
}
