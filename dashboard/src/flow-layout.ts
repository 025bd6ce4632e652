/** Where the barrier-flow view draws the coordinator, the storage and every subtask. */
import type { Flow } from './api.ts';
import { columnsOf } from './layout.ts';

export const NODE_W = 190;
export const NODE_H = 34;
const COL_GAP = 110;
const ROW_GAP = 14;
const TOP = 90;

export interface FlowLayout {
  readonly width: number;
  readonly height: number;
  readonly coordinator: { x: number; y: number };
  readonly storage: { x: number; y: number };
  /** Top-left corner of each subtask's box, by `vertex/subtask`, with its vertex's name. */
  readonly subtasks: Map<string, { x: number; y: number; name: string; subtask: number }>;
  readonly vertexBoxes: Array<{ id: string; name: string; x: number; y: number; h: number }>;
}

export const key = (vertex: string, subtask: number): string => `${vertex}/${subtask}`;

export function layoutFlow(flow: Flow): FlowLayout {
  const cols = columnsOf(flow.vertices);
  const nextY = new Map<number, number>();
  const subtasks: FlowLayout['subtasks'] = new Map();
  const vertexBoxes: FlowLayout['vertexBoxes'] = [];
  for (const v of flow.vertices) {
    const c = cols.get(v.id) ?? 0;
    const x = 30 + c * (NODE_W + COL_GAP);
    const y0 = nextY.get(c) ?? TOP;
    for (let i = 0; i < v.parallelism; i++) subtasks.set(key(v.id, i), { x, y: y0 + 22 + i * (NODE_H + ROW_GAP), name: v.name, subtask: i });
    const h = 22 + v.parallelism * (NODE_H + ROW_GAP);
    vertexBoxes.push({ id: v.id, name: v.name, x: x - 8, y: y0, h });
    nextY.set(c, y0 + h + 24);
  }
  const width = Math.max(500, 60 + (Math.max(0, ...cols.values()) + 1) * (NODE_W + COL_GAP) - COL_GAP);
  const bottom = Math.max(TOP, ...nextY.values());
  return { width, height: bottom + 80, coordinator: { x: width / 2, y: 30 }, storage: { x: width / 2, y: bottom + 40 }, subtasks, vertexBoxes };
}
