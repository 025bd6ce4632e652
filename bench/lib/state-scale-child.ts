/**
 * One backend's memory and CPU for the keyed count job (state-job.ts), measured alone in a child
 * process so that its peak RSS is its own (`maxRSS` is per process and never falls). The parent
 * calls `measureStateJob`; the child (this file run with arguments) runs the job, samples V8's heap
 * every 50 ms for the peak, checks the sink's checksum and prints one JSON line.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import { expectedChecksum, runStateJob, type StateBackendName } from './state-job.ts';

export interface StateScaleFigures {
  readonly backend: StateBackendName;
  readonly keys: number;
  readonly records: number;
  readonly recordsPerSec: number;
  /** Process CPU (all threads) per million records, in seconds. */
  readonly cpuSecondsPerMillion: number;
  /** Peak resident set of the child, in MB (process.resourceUsage().maxRSS). */
  readonly peakRssMb: number;
  /** Peak of V8's used heap, sampled every 50 ms, in MB. */
  readonly peakHeapUsedMb: number;
  /** Peak of memory outside V8's heap held by JS objects (Buffers, typed arrays), sampled likewise, in MB. */
  readonly peakExternalMb: number;
  /**
   * Linux only (0 elsewhere), sampled likewise, in MB: the peak of anonymous resident memory (V8's
   * heap, malloc: lmdb's dirty pages, native buffers) and of file-backed resident memory (pages of
   * lmdb's memory map). RSS counts both.
   */
  readonly peakRssAnonMb: number;
  readonly peakRssFileMb: number;
  readonly checkpoints: number;
}

const MB = 1024 * 1024;
const SELF = fileURLToPath(import.meta.url);

/** Runs the job in a child process and returns its figures. */
export async function measureStateJob(
  backend: StateBackendName,
  keys: number,
  records: number,
  cacheEntriesMax: number,
  checkpointIntervalMs: number,
): Promise<StateScaleFigures> {
  const child = spawn(
    process.execPath,
    ['--expose-gc', ...process.execArgv, SELF, backend, String(keys), String(records), String(cacheEntriesMax), String(checkpointIntervalMs)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => void (out += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`state-scale child (${backend}, ${keys} keys) exited with ${code}`);
  return JSON.parse(out.trim().split('\n').at(-1)!) as StateScaleFigures;
}

/** RssAnon and RssFile (+ RssShmem) of this process in bytes, from /proc/self/status; zeros where there is none. */
function residentSplit(): { anon: number; file: number } {
  let text: string;
  try {
    text = readFileSync('/proc/self/status', 'utf8');
  } catch {
    return { anon: 0, file: 0 };
  }
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
  return { anon: kb('RssAnon'), file: kb('RssFile') + kb('RssShmem') };
}

async function child(argv: readonly string[]): Promise<void> {
  const [backend, keysArg, recordsArg, cacheArg, intervalArg] = argv;
  if (backend !== 'heap' && backend !== 'embedded') throw new Error(`state-scale-child: unknown backend ${backend}`);
  const [keys, records, cacheEntriesMax, intervalMs] = [keysArg, recordsArg, cacheArg, intervalArg].map(Number) as [number, number, number, number];
  let peakHeap = 0;
  let peakExternal = 0;
  let peakAnon = 0;
  let peakFile = 0;
  const sample = () => {
    const split = residentSplit();
    peakAnon = Math.max(peakAnon, split.anon);
    peakFile = Math.max(peakFile, split.file);
    const h = getHeapStatistics();
    const m = process.memoryUsage();
    peakHeap = Math.max(peakHeap, h.used_heap_size);
    peakExternal = Math.max(peakExternal, m.external + m.arrayBuffers);
  };
  const timer = setInterval(sample, 50);
  const run = await runStateJob(backend, keys, records, cacheEntriesMax, intervalMs);
  clearInterval(timer);
  sample();
  if (run.checksum !== expectedChecksum(keys, records))
    throw new Error(`${backend} at ${keys} keys: checksum ${run.checksum} differs from the expected counts`);
  const figures: StateScaleFigures = {
    backend,
    keys,
    records,
    recordsPerSec: run.recordsPerSec,
    cpuSecondsPerMillion: run.cpuSeconds / (records / 1e6),
    peakRssMb: (process.resourceUsage().maxRSS * 1024) / MB,
    peakHeapUsedMb: peakHeap / MB,
    peakExternalMb: peakExternal / MB,
    peakRssAnonMb: peakAnon / MB,
    peakRssFileMb: peakFile / MB,
    checkpoints: run.checkpoints.length,
  };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

if (process.argv[1] === SELF) {
  child(process.argv.slice(2)).catch((err: unknown) => {
    console.error('state-scale-child:', err);
    process.exit(1);
  });
}
