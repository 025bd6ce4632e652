/**
 * Builds dist/ once before the suite when it is missing or older than the sources: tests spawn the
 * real `weir` command (bin/weir.mjs), which runs the compiled code, never the sources.
 */
import { build, isStale } from '../scripts/build.mjs';

export default function setup(): void {
  if (isStale()) build();
}
