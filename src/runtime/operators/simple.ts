/** Stateless one-input operators: map, filter, flatMap. */
import type { Collector } from '../functions.ts';
import { AbstractStreamOperator } from '../operator.ts';

export class MapOperator extends AbstractStreamOperator {
  constructor(private readonly fn: (value: any) => unknown) {
    super();
  }
  processElement(record: unknown): void {
    this.ctx.output.collect(this.fn(record));
  }
}

export class FilterOperator extends AbstractStreamOperator {
  constructor(private readonly fn: (value: any) => boolean) {
    super();
  }
  processElement(record: unknown): void {
    if (this.fn(record)) this.ctx.output.collect(record);
  }
}

export class FlatMapOperator extends AbstractStreamOperator {
  constructor(private readonly fn: (value: any, out: Collector<any>) => void) {
    super();
  }
  processElement(record: unknown): void {
    this.fn(record, this.ctx.output);
  }
}
