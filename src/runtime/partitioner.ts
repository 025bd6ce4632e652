/** How an edge spreads records over the downstream subtasks. */
import type { Key } from '../state/key-groups.ts';

export type PartitionerSpec =
  | { readonly type: 'forward' }
  | { readonly type: 'rebalance' }
  | { readonly type: 'broadcast' }
  | { readonly type: 'hash'; readonly keySelector: (record: any) => Key };
