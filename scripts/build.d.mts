/** Whether dist/ is missing or older than a source file. */
export function isStale(): boolean;
/** Cleans dist/ and compiles src/ with tsc -p tsconfig.build.json; throws with the compiler's output on failure. */
export function build(): void;
