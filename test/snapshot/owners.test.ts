// A snapshot records whose the waiting QPs are at each instant (.hfi1-sdma/qp-owners.json), and a replay names
// them as they were when captured: the processes themselves are not in the snapshot.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSnapshotBackend } from '../../src/snapshot/backend.js';
import { captureSnapshot } from '../../src/snapshot/capture.js';
import { strandedQpTree } from '../support/rendered-host.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('snapshot-owners-');

describe('the owners in a snapshot', () => {
  it('are recorded at each instant for the QPs waiting then, and replayed as recorded', async () => {
    const root = tmp();
    await strandedQpTree(root);
    const file = join(tmp(), 'node.tar.gz');
    const m = await captureSnapshot(
      root,
      file,
      { host: 'n1', toolVersion: '0.1.0', now: new Date(Date.UTC(2026, 11, 1)), emulated: true },
      { samples: 2, intervalMs: 100, clock: { nowMs: () => 0 }, sleep: async () => {} },
    );
    expect(m.instants.map((i) => i.sources.some((s) => s.path === '.hfi1-sdma/qp-owners.json' && s.captured))).toEqual([
      true,
      true,
    ]);
    const b = await openSnapshotBackend(file);
    try {
      const unit = await b.unit(0);
      expect(await unit.qpOwners?.([{ qpn: 0x102, creatorPid: 30002 }])).toEqual([
        {
          qpn: 0x102,
          pid: 30002,
          command: 'verbs_rank_2',
          user: 'hpcuser',
          source: 'recorded',
          note: 'as it was when captured',
        },
      ]);
    } finally {
      await b.close();
    }
  });
});
