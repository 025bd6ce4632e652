/**
 * The logical graph as the API builds it: one node per operator the user applied. Partitioning
 * (keyBy, rebalance, broadcast) and union are not nodes: they live on the references between nodes.
 */
import type { StreamOperator } from '../runtime/operator.ts';
import type { PartitionerSpec } from '../runtime/partitioner.ts';
import type { Sink, TwoPhaseCommitSink } from '../runtime/sink.ts';
import type { Source } from '../runtime/source.ts';
import type { Key } from '../state/key-groups.ts';

export type NodeKind = 'source' | 'operator' | 'sink';

/** A reference to a node's output as one input of a downstream node. */
export interface StreamRef {
  readonly node: LogicalNode;
  /** null: forward when parallelisms match, rebalance otherwise. */
  readonly partitioner: PartitionerSpec | null;
  /** The side output (OutputTag id) of the node this reference reads; absent: its main output. */
  readonly sideOutput?: string;
}

export interface LogicalNode {
  readonly id: number;
  readonly kind: NodeKind;
  name: string;
  uid: string;
  /** Whether the user set the uid (auto uids follow the order operators were created in). */
  uidSet: boolean;
  parallelism: number | null;
  /** One list per logical input (1 or 2); a union contributes several refs to one input. */
  readonly inputs: ReadonlyArray<readonly StreamRef[]>;
  /** Key selector per logical input when the operator uses keyed state. */
  readonly keySelectors: ReadonlyArray<((record: any) => Key) | null>;
  createOperator: () => StreamOperator;
  chainable: boolean;
  /** The sink a sink node writes to: recovery asks it what it committed. */
  sink?: Sink<any> | TwoPhaseCommitSink<any, any>;
  /** The source a source node reads (what it leaves behind is asked when the job ended). */
  source?: Source<any>;
}

/** The nodes of a job in creation order. */
export class LogicalGraph {
  readonly nodes: LogicalNode[] = [];
  private nextId = 1;

  add(node: Omit<LogicalNode, 'id' | 'uid' | 'uidSet' | 'parallelism' | 'chainable'> & { uid?: string }): LogicalNode {
    const id = this.nextId++;
    const full: LogicalNode = {
      ...node,
      id,
      uid: node.uid ?? `auto-${node.name.replace(/[^A-Za-z0-9_-]+/g, '_')}-${id}`,
      uidSet: node.uid !== undefined,
      parallelism: null,
      chainable: true,
    };
    this.nodes.push(full);
    return full;
  }
}
