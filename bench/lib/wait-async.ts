/** Atomics.waitAsync (Node 16+; not in this TypeScript lib's types). */
export type WaitAsync = (array: Int32Array, index: number, value: number) => { async: false; value: string } | { async: true; value: Promise<string> };
export const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;
