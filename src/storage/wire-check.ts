/**
 * Checks the shape of a decoded metadata body field by field (the metadata readers and the keyed
 * handle kinds' layouts in `state/handles/` use it). The envelope checksum already rules
 * out random corruption; this catches a body that decodes but is not what a writer of its version
 * writes, and reports it as a corrupt file naming the field, never as a crash deep in restore.
 */
import { StorageError } from '../core/errors.ts';

export class WireCheck {
  constructor(private readonly file: string) {}

  fail(at: string, expected: string): never {
    throw new StorageError('CORRUPT_FILE', this.file, `malformed metadata at ${at}: expected ${expected}`);
  }

  object(v: unknown, at: string): Record<string, unknown> {
    if (typeof v !== 'object' || v === null || Array.isArray(v) || v instanceof Uint8Array) this.fail(at, 'a map');
    return v as Record<string, unknown>;
  }

  array(v: unknown, at: string): unknown[] {
    if (!Array.isArray(v)) this.fail(at, 'an array');
    return v;
  }

  string(v: unknown, at: string): string {
    if (typeof v !== 'string') this.fail(at, 'a string');
    return v;
  }

  nonEmptyString(v: unknown, at: string): string {
    const s = this.string(v, at);
    if (s === '') this.fail(at, 'a non-empty string');
    return s;
  }

  /** A safe integer in [min, max]. */
  int(v: unknown, at: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) this.fail(at, `an integer in [${min}, ${max}]`);
    return v;
  }

  finite(v: unknown, at: string): number {
    if (typeof v !== 'number' || !Number.isFinite(v)) this.fail(at, 'a finite number');
    return v;
  }

  bytes(v: unknown, at: string): Uint8Array {
    if (!(v instanceof Uint8Array)) this.fail(at, 'binary data');
    // Copy out of the decoder's Buffer so the handle owns plain bytes of its own.
    return Uint8Array.from(v);
  }

  oneOf<T extends string>(v: unknown, at: string, values: readonly T[]): T {
    if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) this.fail(at, `one of ${values.join(', ')}`);
    return v as T;
  }
}
