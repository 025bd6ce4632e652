/** A table the CDC source captures (kept apart from the catalog code so the public types need no `pg` types). */
export interface CapturedTable {
  readonly schema: string;
  readonly table: string;
}
