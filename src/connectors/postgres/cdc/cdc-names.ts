/**
 * Names of the CDC source's server objects. Slot names allow only [a-z0-9_] and 63 bytes; the
 * publication takes the same name so a user finds both. The name derives from the source's id (by
 * default the operator uid), not from Weir's job id: a job resumed with `--from` runs under a new
 * job id and must find the same slot. The name a run created is also kept in the checkpoint, so
 * the slot follows the job even if the id changes later.
 */

const NAME_BYTES_MAX = 63;
const PREFIX = 'weir_cdc_';

/** The slot (and publication) name of the source with id `id`. */
export function slotNameOf(id: string): string {
  const slug = id.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const name = PREFIX + slug;
  if (name.length <= NAME_BYTES_MAX && slug === id) return name;
  // lossy: a hash of the exact id keeps distinct ids apart
  const hash = fnv1a(id).toString(16).padStart(8, '0');
  return `${name.slice(0, NAME_BYTES_MAX - 9)}_${hash}`;
}

/** 32-bit FNV-1a of a string's UTF-16 code units. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** `schema.table` or `table` (schema `public`) as its parts; quotes are not interpreted. */
export function parseTableName(name: string): { schema: string; table: string } | null {
  const parts = name.split('.');
  if (parts.length === 1 && parts[0]!.length > 0) return { schema: 'public', table: parts[0]! };
  if (parts.length === 2 && parts[0]!.length > 0 && parts[1]!.length > 0) return { schema: parts[0]!, table: parts[1]! };
  return null;
}
