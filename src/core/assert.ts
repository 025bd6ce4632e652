/** Assertions for programmer errors: they crash with context, never for bad user input. */
export class AssertionError extends Error {
  override name = 'AssertionError';
}

export function assert(condition: unknown, message: string | (() => string)): asserts condition {
  if (!condition) {
    throw new AssertionError(typeof message === 'string' ? message : message());
  }
}

export function unreachable(value: never, what: string): never {
  throw new AssertionError(`unreachable ${what}: ${JSON.stringify(value)}`);
}
