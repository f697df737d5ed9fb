// Composing in parts (src/assignment/compose_parts.ts, `mesh plan --all`'s
// way), as mesh_assignment on a real store: the parts together are what one
// composition of all gives, row for row and in order; and every part reads
// the one snapshot the reading transaction exported, so a change committed
// after the export is in no part (the next plan or declare finds it).
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import type postgres from 'postgres';
import { openRoles, closeRoles, enrol, putModule, assign, type SqlCtx } from '../helpers.js';
import { composeInParts } from '../../../src/assignment/compose_parts.js';
import type { Sql } from '../../../src/store/connect.js';

const P = suite<SqlCtx>('composing in parts, one snapshot');
const NODES = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];

P.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  // Two sites, one dialable node each: every node has peers, a firewall and an interface to compose.
  for (const [i, n] of NODES.entries())
    await enrol(ctx.as, n, { site: i < 3 ? 'a' : 'b', dialable: i % 3 === 0 ? `${n}.test:51820` : undefined });
  await putModule(ctx.as, 'motd', [
    { id: 'file:/etc/motd', kind: 'file', path: '/etc/motd', content: 'aGk=', mode: '0644' },
  ]);
  await ctx.as.assignment`select overlay.allocate_addresses()`;
});
P.after(async (ctx) => {
  await closeRoles(ctx);
});

const COMPOSE = (q: Sql | postgres.TransactionSql | postgres.ReservedSql, nodes: string[]) =>
  q`select node, resources, encode(resources_hash, 'hex') as hash, changed from assignment.compose_each(${nodes}::text[])`;
const plain = (rows: postgres.Row[]) => rows.map((r) => ({ ...r }));

/** In a declaring transaction (the turn taken first), compose NODES in PARTS; BEFORE runs in each part after it imported the snapshot. */
async function inParts(ctx: SqlCtx, parts: number, before: () => Promise<void> = async () => {}) {
  const pool = ctx.as.assignment as unknown as Sql;
  return pool.begin(async (tx) => {
    await tx`select assignment.take_declare_turn()`;
    return composeInParts(
      tx,
      pool,
      NODES,
      parts,
      async (q, nodes) => {
        await before();
        return COMPOSE(q, nodes);
      },
      async (rows) => plain(rows),
    );
  });
}

P('the parts together are one composition of all: the same rows, in the same order', async (ctx) => {
  const whole = plain(await COMPOSE(ctx.as.assignment as unknown as Sql, NODES));
  assert.is(whole.length, NODES.length);
  for (const parts of [2, 3]) assert.equal(await inParts(ctx, parts), whole, `${parts} parts`);
});

P('a change committed after the snapshot was exported is in no part', async (ctx) => {
  const whole = plain(await COMPOSE(ctx.as.assignment as unknown as Sql, NODES));
  let changed = false;
  // Once a part holds the snapshot, motd is assigned to p1 and p5 (one in each part) and committed.
  const got = await inParts(ctx, 2, async () => {
    if (changed) return;
    changed = true;
    await assign(ctx.as, 'motd', 'p1');
    await assign(ctx.as, 'motd', 'p5');
  });
  assert.ok(changed);
  assert.equal(got, whole, 'every part composed the nodes as they were at the export');
  const after = plain(await COMPOSE(ctx.as.assignment as unknown as Sql, NODES));
  assert.equal(
    after.filter((r, i) => r.hash !== whole[i]!.hash).map((r) => r.node),
    ['p1', 'p5'],
    'the change is there for the next declare',
  );
});

P('hubs and dialable nodes weigh their peers: a hub its group, a dialable node its site', async (ctx) => {
  await ctx.as.overlay`select overlay.set_hub('p1', true)`;
  try {
    const got = await ctx.as.assignment`select node, peers::int from overlay.long_peer_lists() order by node`;
    // p1 is the only hub (its group: all 6); p4 is site b's dialable node (3 members).
    assert.equal(plain(got), [
      { node: 'p1', peers: 6 },
      { node: 'p4', peers: 3 },
    ]);
  } finally {
    await ctx.as.overlay`select overlay.set_hub('p1', false)`;
  }
});

P.run();
