/**
 * Logical graph -> job graph: chains operators that can run in one subtask (forward edge, same
 * parallelism, one producer and one consumer) into vertices, and resolves every edge's partitioner.
 */
import { JobDefinitionError } from '../core/errors.ts';
import type { PartitionerSpec } from '../runtime/partitioner.ts';
import type { LogicalGraph, LogicalNode } from './transformation.ts';

export interface JobEdge {
  readonly source: number;
  readonly target: number;
  readonly partitioner: PartitionerSpec;
  /** Logical input of the target's head operator. */
  readonly input: number;
  /** The side output (OutputTag id) of operator `from` this edge carries; null: its main output. */
  readonly sideOutput: string | null;
  /** The operator of the source vertex's chain that emits onto this edge (an index into its `chain`). */
  readonly from: number;
}

export interface JobVertex {
  readonly index: number;
  readonly name: string;
  readonly parallelism: number;
  readonly maxParallelism: number;
  /** Head first; every operator after the operator it is chained to (creation order). */
  readonly chain: readonly LogicalNode[];
  /** Per chain operator, the index in `chain` of the operator that calls it; -1 for the head. */
  readonly chainParents: readonly number[];
  readonly inputs: readonly JobEdge[];
  readonly outputs: readonly JobEdge[];
  readonly isSource: boolean;
}

export interface JobGraph {
  readonly vertices: readonly JobVertex[];
  /** How often sources and watermark assigners emit periodic watermarks (ms); absent: 200. */
  readonly autoWatermarkIntervalMs?: number;
}

/** The chain positions of the operators chained to position `k` (given a vertex's `chainParents`), in chain order. */
export function chainedTo(chainParents: readonly number[], k: number): number[] {
  const next: number[] = [];
  chainParents.forEach((p, c) => {
    if (p === k) next.push(c);
  });
  return next;
}

/** `a -> b -> c` along a chain, `a -> (b -> c, d)` where it branches. */
function chainName(chain: readonly LogicalNode[], parents: readonly number[], at: number): string {
  const children = chainedTo(parents, at).map((k) => chainName(chain, parents, k));
  const own = chain[at]!.name;
  if (children.length === 0) return own;
  return children.length === 1 ? `${own} -> ${children[0]}` : `${own} -> (${children.join(', ')})`;
}

/** The periodic watermark interval when a job sets none. */
export const DEFAULT_AUTO_WATERMARK_INTERVAL_MS = 200;

export function buildJobGraph(
  graph: LogicalGraph,
  defaultParallelism: number,
  maxParallelism: number,
  autoWatermarkIntervalMs = DEFAULT_AUTO_WATERMARK_INTERVAL_MS,
): JobGraph {
  if (graph.nodes.length === 0) throw new JobDefinitionError('the job has no operators: add a source and a sink');
  const uids = new Map<string, LogicalNode>();
  for (const node of graph.nodes) {
    const other = uids.get(node.uid);
    if (other) throw new JobDefinitionError(`uid '${node.uid}' is used by both '${other.name}' and '${node.name}'; uids must be unique`);
    uids.set(node.uid, node);
    const p = node.parallelism ?? defaultParallelism;
    if (p > maxParallelism)
      throw new JobDefinitionError(`operator '${node.name}' (uid ${node.uid}): parallelism ${p} exceeds maxParallelism ${maxParallelism}`);
  }
  const parallelismOf = (n: LogicalNode) => n.parallelism ?? defaultParallelism;
  const chainedInto = new Map<number, LogicalNode>(); // node id -> its chain head
  const chainOf = new Map<number, LogicalNode[]>();
  const parentsOf = new Map<number, number[]>(); // head id -> per chain position, its parent's position
  for (const node of graph.nodes) {
    const refs = node.inputs.length === 1 ? node.inputs[0]! : [];
    const up = refs.length === 1 ? refs[0]! : null;
    const canChain =
      up !== null &&
      up.sideOutput === undefined &&
      node.kind !== 'source' &&
      node.chainable &&
      up.node.chainable &&
      (up.partitioner === null || up.partitioner.type === 'forward') &&
      parallelismOf(up.node) === parallelismOf(node);
    if (canChain) {
      const head = chainedInto.get(up!.node.id)!;
      const chain = chainOf.get(head.id)!;
      chainedInto.set(node.id, head);
      parentsOf.get(head.id)!.push(chain.indexOf(up!.node));
      chain.push(node);
    } else {
      chainedInto.set(node.id, node);
      chainOf.set(node.id, [node]);
      parentsOf.set(node.id, [-1]);
    }
  }
  const heads = graph.nodes.filter((n) => chainedInto.get(n.id) === n);
  const vertexOfHead = new Map(heads.map((h, i) => [h.id, i]));
  const edges: JobEdge[] = [];
  for (const head of heads) {
    head.inputs.forEach((refs, input) => {
      for (const ref of refs) {
        const upHead = chainedInto.get(ref.node.id)!;
        const source = vertexOfHead.get(upHead.id)!;
        const from = chainOf.get(upHead.id)!.indexOf(ref.node);
        const pUp = parallelismOf(ref.node);
        const pDown = parallelismOf(head);
        const partitioner = ref.partitioner ?? (pUp === pDown ? { type: 'forward' as const } : { type: 'rebalance' as const });
        if (partitioner.type === 'forward' && pUp !== pDown) {
          throw new JobDefinitionError(
            `forward edge from '${ref.node.name}' (parallelism ${pUp}) to '${head.name}' (parallelism ${pDown}): parallelisms must match; use rebalance()`,
          );
        }
        edges.push({ source, target: vertexOfHead.get(head.id)!, partitioner, input, sideOutput: ref.sideOutput ?? null, from });
      }
    });
  }
  const vertices: JobVertex[] = heads.map((head, index) => {
    const chain = chainOf.get(head.id)!;
    const chainParents = parentsOf.get(head.id)!;
    return {
      index,
      name: chainName(chain, chainParents, 0),
      parallelism: parallelismOf(head),
      maxParallelism,
      chain,
      chainParents,
      inputs: edges.filter((e) => e.target === index),
      outputs: edges.filter((e) => e.source === index),
      isSource: head.kind === 'source',
    };
  });
  for (const v of vertices) {
    for (const node of v.chain.slice(1)) {
      if (node.keySelectors.some((k) => k !== null)) throw new JobDefinitionError(`operator '${node.name}' uses keyed state but is not directly after keyBy`);
    }
  }
  return { vertices, autoWatermarkIntervalMs };
}
