/** Columns of the job graph: a vertex sits one column right of its furthest input. */
export function columnsOf(vertices: ReadonlyArray<{ id: string; inputs: readonly string[] }>): Map<string, number> {
  const col = new Map<string, number>();
  const visit = (id: string, depth: number): number => {
    const known = col.get(id);
    if (known !== undefined) return known;
    const v = vertices.find((x) => x.id === id);
    const c = v === undefined || v.inputs.length === 0 ? 0 : Math.max(...v.inputs.map((i) => visit(i, depth + 1) + 1));
    col.set(id, c);
    return c;
  };
  for (const v of vertices) visit(v.id, 0);
  return col;
}
