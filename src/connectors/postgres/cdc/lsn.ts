/**
 * Log sequence numbers: PostgreSQL writes them `X/Y` (two 32-bit hex halves); Weir compares them as
 * bigints and keeps them as text in checkpoints.
 */

/** The zero LSN: before anything. */
export const LSN_ZERO = 0n;

/** The LSN `X/Y` as a number; throws RangeError on anything else. */
export function parseLsn(text: string): bigint {
  const m = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (m === null) throw new RangeError(`'${text}' is not an LSN (X/Y in hexadecimal)`);
  return (BigInt(`0x${m[1]!}`) << 32n) | BigInt(`0x${m[2]!}`);
}

/** `X/Y` as PostgreSQL prints it (upper-case hexadecimal, no padding). */
export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffff_ffffn).toString(16).toUpperCase()}`;
}

/** The 64-bit LSN at `offset` of a replication message. */
export function readLsn(buf: Buffer, offset: number): bigint {
  return buf.readBigUInt64BE(offset);
}

/** The later of two LSNs (Math.max takes no bigints). */
export function laterLsn(a: bigint, b: bigint): bigint {
  if (a >= b) return a;
  return b;
}
