// R2: "never reported" and "reported nothing" are different answers. A node
// with no report row holds unknown (null); one that reported an empty list
// holds 0. Told apart, a rebuilt node is never told to remove everything
// because the mesh confused "no account" with "an account of nothing".
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { openRole, closeRole, type RoleCtx } from '../harness/store.js';

const S = suite<RoleCtx>('R2 never reported is not reported nothing');
S.before((ctx) => openRole(ctx, 'inventory'));
S.after(closeRole);

S(
  'node_status: no report row is null everywhere; an empty report is 0 held at its serial, with an age',
  async ({ store, sql }) => {
    for (const [name, k] of [
      ['silent', 1],
      ['empty', 4],
    ] as const) {
      await store.admin`insert into inventory.node (name, identity_key, overlay_key, sealing_key, enrolled_at, last_seen)
      values (${name}, ${Buffer.alloc(32, k)}, ${Buffer.alloc(32, k + 1)}, ${Buffer.alloc(32, k + 2)}, now(), now())`;
    }
    await sql`select inventory.record_report(node_name => 'empty', report_serial => 3, held_now => '[]'::jsonb, failed_now => '[]'::jsonb)`;
    const rows =
      await store.admin`select name, reported_serial, holds, failing, reported_at is not null as dated, report_age is not null as aged
                                   from inventory.node_status order by name`;
    assert.equal(
      rows.map((r) => ({ ...r })),
      [
        { name: 'empty', reported_serial: '3', holds: 0, failing: 0, dated: true, aged: true },
        { name: 'silent', reported_serial: null, holds: null, failing: null, dated: false, aged: false },
      ],
    );
  },
);

S.run();
