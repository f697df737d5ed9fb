// The peer graph for a few spokes reads only the members that can be their
// peers (sql/overlay/0145): their group's hub, their site's dialable nodes,
// and a dialable spoke's whole site. Whatever is asked for, each node's peers
// are the rows the whole graph gives it: a spoke, a dialable spoke, a hub,
// a spoke of a site with no dialable node, several at once.
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { openRoles, closeRoles, enrol, type SqlCtx } from '../helpers.js';

const P = suite<SqlCtx>('peers of a few, as the whole graph gives them');
const SITES: Record<string, [string, boolean][]> = {
  a: [
    ['h1', true],
    ['d1', true],
    ['s1', false],
    ['s2', false],
  ],
  b: [
    ['h2', true],
    ['s3', false],
  ],
  c: [
    ['d3', true],
    ['s4', false],
  ],
  e: [['s5', false]],
};

P.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  for (const [site, nodes] of Object.entries(SITES))
    for (const [n, dialable] of nodes)
      await enrol(ctx.as, n, { site, dialable: dialable ? `${n}.test:51820` : undefined });
  await ctx.as.overlay`select overlay.set_hub('h1', true)`;
  await ctx.as.overlay`select overlay.set_hub('h2', true)`;
  await ctx.as.assignment`select overlay.allocate_addresses()`;
});
P.after(async (ctx) => {
  await closeRoles(ctx);
});

const PEERS = (ctx: SqlCtx, names: string[] | null) =>
  ctx.as.assignment`select node, peer, public_key, endpoint, allowed_ips, keepalive, route, reason
                      from overlay.peers_of(${names}::text[]) order by node, peer`;
const plain = (rows: readonly Record<string, unknown>[]) => rows.map((r) => ({ ...r }));

P('each node asked for alone, and some together, has the peers the whole graph gives it', async (ctx) => {
  const all = plain(await PEERS(ctx, null));
  const nodes = Object.values(SITES).flatMap((s) => s.map(([n]) => n));
  // The fixture holds what the few-spoke read must still find: a hub, a site's dialable node, a dialable spoke's site.
  for (const [a, b] of [
    ['s1', 'h1'],
    ['s1', 'd1'],
    ['d1', 's2'],
    ['s4', 'd3'],
  ])
    assert.ok(
      all.some((r) => r.node === a && r.peer === b),
      `${a} peers with ${b} in the whole graph`,
    );
  for (const n of nodes)
    assert.equal(
      plain(await PEERS(ctx, [n])),
      all.filter((r) => r.node === n),
      `${n} alone`,
    );
  for (const some of [
    ['s1', 's4'],
    ['d1', 'd3', 's5'],
    ['s3', 'h2'],
  ])
    assert.equal(
      plain(await PEERS(ctx, some)),
      all.filter((r) => some.includes(r.node as string)),
      some.join(', '),
    );
});

P.run();
