/** Formatting helpers for the CLI: sizes, rates, durations, one-line messages and plain tables. */

/** Bytes as a short human-readable size: `512 B`, `12.3 KiB`, `4.0 MiB`. */
export function humanBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '?';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** An integer with thousands separators: `48,000`. */
export function groupDigits(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** A rate (or any count), compact: `980`, `12.4k`, `1.2M`. */
export function humanRate(perSec: number): string {
  if (!Number.isFinite(perSec) || perSec < 0) return '?';
  if (perSec < 1000) return `${Math.round(perSec)}`;
  if (perSec < 1_000_000) return `${(perSec / 1000).toFixed(1)}k`;
  return `${(perSec / 1_000_000).toFixed(1)}M`;
}

/** A duration: `830 ms`, `8.2 s`, `3m 05s`. */
export function humanDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
}

/** Wall-clock ms as ISO-8601, or `-` when unknown. */
export function isoTime(ms: number | null): string {
  return ms === null ? '-' : new Date(ms).toISOString();
}

/** Any error or message squeezed onto one line (the CLI's error rule: one line per error). */
export { oneLine } from '../core/errors.ts';

/** A left-aligned text table with a header row; the last column is not padded. */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}
