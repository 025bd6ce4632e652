/**
 * Job graph -> execution plan: every subtask with its key-group range, and every channel between
 * two subtasks with the order in which the producer's record writer and the consumer's input gate
 * see it. A pure function of the job graph; deployment builds channels and tasks from it, and a
 * scheduler placing subtasks on task managers reads which channels cross from one to another.
 */
import { keyGroupRangeForSubtask, type KeyGroupRange } from '../state/key-groups.ts';
import type { JobGraph } from './job-graph.ts';

/** One subtask: vertex index and subtask index. */
export interface SubtaskRef {
  readonly vertex: number;
  readonly subtask: number;
}

/** A FIFO connection from one upstream subtask to one downstream subtask over one job edge. */
export interface ChannelPlan {
  /** `<vertex>.<subtask>-><vertex>.<subtask>#<output edge of the producer>`: unique in the plan. */
  readonly id: string;
  readonly producer: SubtaskRef;
  readonly consumer: SubtaskRef;
  /** Index of the edge among the producer vertex's outputs. */
  readonly outputEdge: number;
}

export interface SubtaskPlan extends SubtaskRef {
  readonly keyGroupRange: KeyGroupRange;
  /** Per output edge of the vertex (in order), the channel ids the record writer feeds, by consumer subtask. */
  readonly outputs: ReadonlyArray<readonly string[]>;
  /** The input gate's channels in order, each with the logical input of the head operator it feeds. */
  readonly inputs: ReadonlyArray<{ readonly channel: string; readonly input: number }>;
}

export interface ExecutionPlan {
  readonly channels: readonly ChannelPlan[];
  /** Vertex by vertex, subtask by subtask. */
  readonly subtasks: readonly SubtaskPlan[];
}

const channelId = (producer: SubtaskRef, consumer: SubtaskRef, outputEdge: number): string =>
  `${producer.vertex}.${producer.subtask}->${consumer.vertex}.${consumer.subtask}#${outputEdge}`;

/** A forward edge connects subtask i only to subtask i; every other partitioner connects all to all. */
export function buildExecutionPlan(graph: JobGraph): ExecutionPlan {
  const channels: ChannelPlan[] = [];
  for (const v of graph.vertices) {
    v.outputs.forEach((edge, outputEdge) => {
      const target = graph.vertices[edge.target]!;
      for (let up = 0; up < v.parallelism; up++) {
        for (let down = 0; down < target.parallelism; down++) {
          if (edge.partitioner.type === 'forward' && up !== down) continue;
          const producer = { vertex: v.index, subtask: up };
          const consumer = { vertex: target.index, subtask: down };
          channels.push({ id: channelId(producer, consumer, outputEdge), producer, consumer, outputEdge });
        }
      }
    });
  }
  // Index once by producer and by consumer (in creation order), so building every subtask's lists
  // costs its own channels, not a scan of all of them: an all-to-all edge at parallelism 128 has 16,384.
  const from = groupBy(channels, (c) => c.producer);
  const to = groupBy(channels, (c) => c.consumer);
  const subtasks: SubtaskPlan[] = [];
  for (const v of graph.vertices) {
    for (let i = 0; i < v.parallelism; i++) {
      const self = { vertex: v.index, subtask: i };
      const mine = from.get(subtaskKey(self)) ?? [];
      const outputs = v.outputs.map((_, e) => mine.filter((c) => c.outputEdge === e).map((c) => c.id));
      const feeding = to.get(subtaskKey(self)) ?? [];
      const inputs: Array<{ channel: string; input: number }> = [];
      for (const edge of v.inputs) {
        const upstream = graph.vertices[edge.source]!;
        const e = upstream.outputs.indexOf(edge);
        for (const c of feeding) if (c.producer.vertex === upstream.index && c.outputEdge === e) inputs.push({ channel: c.id, input: edge.input });
      }
      subtasks.push({ ...self, keyGroupRange: keyGroupRangeForSubtask(v.maxParallelism, v.parallelism, i), outputs, inputs });
    }
  }
  return { channels, subtasks };
}

const subtaskKey = (s: SubtaskRef): string => `${s.vertex}.${s.subtask}`;

function groupBy(channels: readonly ChannelPlan[], side: (c: ChannelPlan) => SubtaskRef): Map<string, ChannelPlan[]> {
  const out = new Map<string, ChannelPlan[]>();
  for (const c of channels) {
    const key = subtaskKey(side(c));
    let list = out.get(key);
    if (!list) out.set(key, (list = []));
    list.push(c);
  }
  return out;
}
