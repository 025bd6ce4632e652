import { describe, expect, it } from 'vitest';
import { decideSinkRecovery, type SinkCommitView } from '../../src/cluster/job-master/sink-recovery.ts';

const files = (newestCommitted: number | null): SinkCommitView => ({ uid: 'out', name: 'file-sink', newestCommitted, canRollBack: true });
const pg = (newestCommitted: number | null): SinkCommitView => ({ uid: 'db', name: 'postgres', newestCommitted, canRollBack: false });
const blind: SinkCommitView = { uid: 'blind', name: 'mystery', newestCommitted: undefined, canRollBack: false };
const skipped = [{ checkpointId: 5, reason: 'chk-5/_metadata: checksum mismatch' }];

describe('the sink-aware restore rule', () => {
  it('proceeds when no sink committed past the restore point', () => {
    expect(decideSinkRecovery({ restoreId: 5, skipped: [], acceptDuplicates: false }, [files(5), pg(4), blind])).toEqual({
      kind: 'proceed',
      rollBacks: [],
      warnings: [],
    });
  });

  it('rolls back a sink that can, when it committed a newer checkpoint', () => {
    const d = decideSinkRecovery({ restoreId: 4, skipped, acceptDuplicates: false }, [files(5)]);
    expect(d).toEqual({ kind: 'proceed', rollBacks: [{ uid: 'out', name: 'file-sink', after: 4 }], warnings: [] });
  });

  it('refuses, naming the sink and both checkpoints, when the sink cannot roll back', () => {
    const d = decideSinkRecovery({ restoreId: 4, skipped, acceptDuplicates: false }, [files(5), pg(5)]);
    expect(d.kind).toBe('refuse');
    if (d.kind !== 'refuse') return;
    expect(d.message).toContain("sink 'postgres' (uid 'db') has committed checkpoint 5");
    expect(d.message).toContain('restore checkpoint 4');
    expect(d.message).toContain('chk-5/_metadata: checksum mismatch');
    expect(d.message).toContain('--accept-duplicates');
  });

  it('a sink that cannot tell blocks only a fallback past a newer checkpoint', () => {
    expect(decideSinkRecovery({ restoreId: 4, skipped: [], acceptDuplicates: false }, [blind]).kind).toBe('proceed');
    const d = decideSinkRecovery({ restoreId: 4, skipped, acceptDuplicates: false }, [blind]);
    expect(d.kind === 'refuse' && d.message).toContain("sink 'mystery' (uid 'blind') cannot tell");
  });

  it('accepting duplicates turns refusals into warnings and still rolls back what it can', () => {
    const d = decideSinkRecovery({ restoreId: 4, skipped, acceptDuplicates: true }, [files(6), pg(5), blind]);
    expect(d.kind).toBe('proceed');
    if (d.kind !== 'proceed') return;
    expect(d.rollBacks).toEqual([{ uid: 'out', name: 'file-sink', after: 4 }]);
    expect(d.warnings.length).toBe(2);
  });

  it('a fresh start refuses a sink that already holds committed output', () => {
    const d = decideSinkRecovery({ restoreId: null, skipped: [], acceptDuplicates: false }, [files(3)]);
    expect(d.kind === 'refuse' && d.message).toContain('already holds output committed for checkpoint 3');
    expect(decideSinkRecovery({ restoreId: null, skipped: [], acceptDuplicates: false }, [files(null), blind]).kind).toBe('proceed');
  });
});
