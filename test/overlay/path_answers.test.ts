// What-if and why (Q2), at the store: the answers are read from the graph the
// declarations carry (the hub groups of O4, overlay.member_groups, and the
// peer rules of O1), the firewall composed from it (X2) and what was
// declared, owed and reported. A fleet of two hubs, h1 (site a) and h2 (site
// c); each spoke is in the group of its address's /20 block modulo the hubs
// (block 0: h1's, block 1: h2's), so each group has spokes at sites a and b;
// d1 at site b is dialable, so b1 and b2 peer with it directly. Each case
// changes one fact and asks again. The real pings that must agree with these
// answers are overlay/hub_share's (two hubs) and the lab's (scenario what-if).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { freshMesh, type Mesh } from '../harness/mesh.js';

interface Ctx {
  mesh: Mesh;
  dir: string;
}
const Q = suite<Ctx>('what-if and why (Q2)');

// name, site, dialable, address: h1's group is block 0 (10.99.0.0/20), h2's block 1 (10.99.16.0/20).
const NODES = [
  ['h1', 'a', 'h1.example.net:51820', '10.99.0.1'],
  ['h2', 'c', 'h2.example.net:51820', '10.99.16.1'],
  ['a1', 'a', null, '10.99.0.11'],
  ['a2', 'a', null, '10.99.16.12'],
  ['b1', 'b', null, '10.99.0.21'],
  ['b2', 'b', null, '10.99.16.22'],
  ['d1', 'b', 'd1.example.net:51820', '10.99.16.31'],
  ['c1', 'c', null, '10.99.0.41'],
] as const;
const GROUP = { h1: ['a1', 'b1', 'c1'], h2: ['a2', 'b2', 'd1'] };
const ALL = NODES.map(([n]) => n as string);

/** The ordered pairs among NAMES that lose their path when STRANDED lose their hub: one end stranded, not direct peers. */
function lostPairs(names: string[], stranded: string[], peers: Set<string>): string[] {
  return names
    .flatMap((a) => names.filter((b) => b !== a).map((b) => [a, b] as const))
    .filter(([a, b]) => (stranded.includes(a) || stranded.includes(b)) && !peers.has(`${a}>${b}`))
    .map(([a, b]) => `${a}>${b}`);
}
// Site b's spokes peer with d1 (dialable) directly; nothing else between spokes.
const SITE_PEERS = new Set(['b1>d1', 'd1>b1', 'b2>d1', 'd1>b2']);

async function cli(ctx: Ctx, ...args: string[]): Promise<string> {
  const r = await ctx.mesh.cli(args);
  if (r.code !== 0) throw new Error(`mesh ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

async function addModule(ctx: Ctx, name: string, resources: unknown[]): Promise<void> {
  const f = join(ctx.dir, `${name}.json`);
  writeFileSync(f, JSON.stringify({ name, resources }));
  await cli(ctx, 'module', 'add', f);
}

/** Everything owed delivered, every node here and reporting its newest declaration applied. */
async function settle(ctx: Ctx): Promise<void> {
  const a = ctx.mesh.store.admin;
  await a`update assignment.outbox set delivered_at = now() where delivered_at is null`;
  await a`insert into inventory.report (node, serial, held)
          select node, max(serial), '[]'::jsonb from assignment.declaration group by node
          on conflict (node) do update set serial = excluded.serial, reported_at = now()`;
  await a`update assignment.declaration set acknowledged_at = now() where acknowledged_at is null`;
  await a`update inventory.node set last_seen = now()`;
}

async function why(ctx: Ctx, ...args: string[]): Promise<{ fact: string; detail: string; remedy: string | null }> {
  return JSON.parse(await cli(ctx, 'overlay', 'why', ...args, '--json'));
}

Q.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.dir = mkdtempSync(join(tmpdir(), 'path-answers-'));
  for (const [name, site, dialable, address] of NODES) {
    await ctx.mesh.store
      .admin`insert into inventory.node (name, site, dialable, identity_key, overlay_key, sealing_key, enrolled_at, last_seen)
             values (${name}, ${site}, ${dialable}, ${randomBytes(32)}, ${randomBytes(32)}, ${randomBytes(32)}, clock_timestamp(), now())`;
    await ctx.mesh.store.admin`insert into overlay.address (node, address) values (${name}, ${address}::inet)`;
  }
  await cli(ctx, 'overlay', 'hub', 'h1');
  await cli(ctx, 'overlay', 'hub', 'h2');
  // A module on a2 serving 8080 to its site; another, assigned nowhere, that would open 9090.
  await addModule(ctx, 'svc', [{ kind: 'opening', name: 'web', proto: 'tcp', port: 8080, from: 'site:a' }]);
  await addModule(ctx, 'other', [{ kind: 'opening', name: 'admin', proto: 'tcp', port: 9090, from: 'any' }]);
  await cli(ctx, 'assign', 'svc', 'a2');
  await cli(ctx, 'declare', '--all');
  await settle(ctx);
});
Q.after(async (ctx) => {
  await ctx.mesh.stop();
});

Q(
  "Q2, O4: the answers read the graph peers_of composes: the same peers, and each spoke routes through its group's hub",
  async (ctx) => {
    const a = ctx.mesh.store.admin;
    const peers = new Set(
      (await a`select node, peer from overlay.peers_of(null)`).map((r) => `${r.node as string}>${r.peer as string}`),
    );
    const routes = Object.fromEntries(
      (await a`select node, peer from overlay.peers_of(null) where route`).map((r) => [
        r.node as string,
        r.peer as string,
      ]),
    );
    const members = await a`select * from overlay.route_members(null)`;
    for (const m of members) assert.is(m.route_now ?? undefined, routes[m.node as string], `${m.node}'s route hub`);
    assert.equal(
      Object.fromEntries(members.filter((m) => !m.hub).map((m) => [m.node, m.route_now])),
      Object.fromEntries(Object.entries(GROUP).flatMap(([h, ns]) => ns.map((n) => [n, h]))),
      "each spoke's route hub is its address block's group",
    );
    const said = await a`select x.node as a, y.node as b,
                              overlay.peered(x.node, x.hub, x.route_now, x.site, x.dialable, y.node, y.hub, y.route_now, y.site, y.dialable) as p
                         from overlay.route_members(null) x cross join overlay.route_members(null) y where x.node <> y.node`;
    const wrong = said.filter((r) => (r.p as boolean) !== peers.has(`${r.a}>${r.b}`)).map((r) => `${r.a}>${r.b}`);
    assert.equal(wrong, [], 'overlay.peered says of every pair what overlay.peers_of lists');
  },
);

Q(
  "Q2: what-if --down h2 strands its group; the cross-group pairs go, h1's group and same-site peers stay",
  async (ctx) => {
    const w = JSON.parse(await cli(ctx, 'overlay', 'what-if', '--down', 'h2', '--limit', '0', '--json'));
    assert.equal(
      w.stranded.map((s: { node: string; hub: string; carriedBy: string }) => [s.node, s.hub, s.carriedBy]),
      GROUP.h2.map((n) => [n, 'h2', 'h1']),
      "h2's group, by address and not by site; h1 would carry them once h2 is out of the graph",
    );
    const alive = ALL.filter((n) => n !== 'h2');
    const want = lostPairs(alive, GROUP.h2, SITE_PEERS);
    const pairs = w.pairs.map((p: { node: string; peer: string }) => `${p.node}>${p.peer}`);
    assert.equal(pairs, [...want].sort(), 'every pair with a stranded end but its direct peers, in order');
    assert.ok(pairs.includes('a1>a2') && pairs.includes('b1>b2'), 'one site, two groups: their path crossed both hubs');
    assert.ok(
      !pairs.includes('b1>d1') && !pairs.includes('d1>b2'),
      'same-site peers keep their path without their hub',
    );
    assert.ok(!pairs.some((p: string) => GROUP.h1.includes(p.split('>')[0]!) && GROUP.h1.includes(p.split('>')[1]!)));
    assert.is(w.pairsTotal, want.length, 'count_lost_paths counts the pairs lose_paths lists');
    assert.equal(
      w.stranded.map((s: { node: string; lost: number }) => [s.node, s.lost]),
      [
        ['a2', 6],
        ['b2', 5],
        ['d1', 4],
      ],
      'each stops reaching every member up but itself, less its direct peers',
    );
    assert.ok(
      w.pairs.every((p: { hub: string; carriedBy: string }) => p.hub === 'h2' && p.carriedBy === 'h1'),
      'h1 carries them once h2 is out',
    );
    assert.equal(
      w.openings.map((o: { node: string; port: number; fromNode: string; lostHub: string }) => [
        o.node,
        o.port,
        o.fromNode,
        o.lostHub,
      ]),
      [
        ['a2', 8080, 'a1', 'h2'],
        ['a2', 8080, 'h1', 'h2'],
      ],
      "a2's opening to site a loses its sources: a2 is stranded",
    );
    const h1 = JSON.parse(await cli(ctx, 'overlay', 'what-if', '--down', 'h1', '--limit', '0', '--json'));
    assert.equal(
      h1.openings.map((o: { node: string; fromNode: string; lostHub: string; carriedBy: string }) => [
        o.node,
        o.fromNode,
        o.lostHub,
        o.carriedBy,
      ]),
      [['a2', 'a1', 'h1', 'h2']],
      "with h1 down, a1 (stranded) loses a2's opening; h1 itself is down, not a source that lost its path",
    );
  },
);

Q('Q2: what-if --down h1,h2 leaves no hub to carry anyone; a spoke alone strands nothing', async (ctx) => {
  const w = JSON.parse(await cli(ctx, 'overlay', 'what-if', '--down', 'h1,h2', '--limit', '0', '--json'));
  assert.equal(w.stranded.map((s: { node: string }) => s.node).sort(), [...GROUP.h1, ...GROUP.h2].sort());
  assert.ok(w.stranded.every((s: { carriedBy: string | null }) => s.carriedBy === null));
  assert.ok(w.pairs.every((p: { carriedBy: string | null }) => p.carriedBy === null));
  assert.is(w.carried, false);
  const spokes = [...GROUP.h1, ...GROUP.h2];
  assert.is(w.pairsTotal, lostPairs(spokes, spokes, SITE_PEERS).length, 'every spoke keeps only its site peers');
  const text = await cli(ctx, 'overlay', 'what-if', '--down', 'h1,h2');
  assert.match(text, /no other hub would carry/);
  const alone = JSON.parse(await cli(ctx, 'overlay', 'what-if', '--down', 'a1', '--json'));
  assert.is(alone.pairsTotal, 0);
  assert.equal(alone.stranded, []);
});

Q(
  'Q2: what-if refuses names the overlay does not hold (MSHY1) and none at all (MSHY0); why, a port that is none (MSHY3)',
  async (ctx) => {
    let r = await ctx.mesh.cli(['overlay', 'what-if', '--down', 'nosuch', '--json']);
    assert.is(r.code, 1);
    assert.is(JSON.parse(r.stdout).error.code, 'MSHY1');
    r = await ctx.mesh.cli(['overlay', 'what-if', '--json']);
    assert.is(JSON.parse(r.stdout).error.code, 'MSHY0');
    r = await ctx.mesh.cli(['overlay', 'why', 'a1', 'a1', '--json']);
    assert.is(JSON.parse(r.stdout).error.code, 'MSHY2');
    // Out of range is explain_path's rule; a port that is no number, or none its integer holds, is refused before SQL casts it.
    for (const port of ['70000', '0', 'https', '1.5', '2147483648', '99999999999']) {
      r = await ctx.mesh.cli(['overlay', 'why', 'a1', 'a2', '--port', port, '--json']);
      assert.is(JSON.parse(r.stdout).error.code, 'MSHY3', `--port ${port}: ${r.stdout}`);
    }
    r = await ctx.mesh.cli(['overlay', 'what-if', '--down', 'h1', '--limit', 'x', '--json']);
    assert.is(JSON.parse(r.stdout).error.code, 'MSHY4');
  },
);

Q('Q2: why says path open through one hub or both, and no edge only where the graph holds no path', async (ctx) => {
  let open = await why(ctx, 'a1', 'b1');
  assert.is(open.fact, 'path open');
  assert.match(open.detail, /through hub h1$/);
  open = await why(ctx, 'a1', 'a2');
  assert.is(open.fact, 'path open', 'one site, two groups');
  assert.match(open.detail, /a1 reaches a2 through hubs h1 and h2/);
  assert.match(
    (await why(ctx, 'h1', 'b2')).detail,
    /h1 reaches b2 through hub h2/,
    "a hub reaches another's spoke through it",
  );
  assert.is((await why(ctx, 'b1', 'd1')).detail, 'b1 and d1 are peers', 'peers at one site');
  assert.is((await why(ctx, 'c1', 'a1')).fact, 'path open', 'one group, two sites');
  // With no hub, two spokes of different sites have no path: asked in a transaction undone after.
  let none: Record<string, unknown>[] = [];
  await ctx.mesh.store.admin
    .begin(async (t) => {
      await t`delete from overlay.hub`;
      none = [
        ...(await t`select * from assignment.explain_path('c1', 'a1')`),
        ...(await t`select * from assignment.explain_path('b1', 'd1')`),
      ];
      throw new Error('undone');
    })
    .catch((err: Error) => {
      if (err.message !== 'undone') throw err;
    });
  assert.is(none[0]!.fact, 'no edge');
  assert.match(none[0]!.detail as string, /c1 and a1 are not peers \(sites c and a\), and no hub carries them/);
  assert.is(none[1]!.fact, 'path open', 'peers need no hub');
});
Q('Q2: why names no opening, and the rule that would admit it', async (ctx) => {
  assert.is((await why(ctx, 'a1', 'a2', '--port', '8080')).fact, 'path open');
  const site = await why(ctx, 'b1', 'a2', '--port', '8080');
  assert.is(site.fact, 'no opening', 'b1 is at site b: the opening is to site a');
  assert.match(site.remedy!, /module svc serves web \(tcp 8080\) to site:a/);
  const none = await why(ctx, 'a1', 'a2', '--port', '9090');
  assert.is(none.fact, 'no opening');
  assert.match(none.remedy!, /module other opens it from any \(mesh assign other a2\)/);
});

Q("Q2: why names a hub out of touch on the path, the other group's hub too, and none off the path", async (ctx) => {
  const a = ctx.mesh.store.admin;
  await a`update inventory.node set last_seen = now() - interval '10 minutes' where name = 'h2'`;
  let r = await why(ctx, 'a1', 'a2');
  assert.is(r.fact, 'end out of touch', 'a1 reaches a2 through h1 and h2');
  assert.match(r.detail, /a hub between them, h2 is out of touch/);
  assert.is((await why(ctx, 'a1', 'b1')).fact, 'path open', "h2 is not on the path between two of h1's spokes");
  assert.is((await why(ctx, 'b2', 'd1')).fact, 'path open', 'peers need no hub');
  await a`update inventory.node set last_seen = now()`;
  await a`update inventory.node set last_seen = now() - interval '10 minutes' where name = 'h1'`;
  r = await why(ctx, 'a1', 'b1');
  assert.is(r.fact, 'end out of touch');
  assert.match(r.detail, /the hub between them, h1 is out of touch/);
  await a`update inventory.node set last_seen = now()`;
  assert.is((await why(ctx, 'a1', 'a2')).fact, 'path open');
});

Q('Q2: why names a peer key changed and not yet applied, then path open once applied', async (ctx) => {
  const a = ctx.mesh.store.admin;
  const [k] = await a`select overlay_key from inventory.node where name = 'a2'`;
  await a`select inventory.set_overlay_key(${'a2'}, ${k!.overlay_key as Buffer}, ${randomBytes(32)})`;
  await cli(ctx, 'declare', '--all');
  let r = await why(ctx, 'a1', 'a2');
  assert.is(r.fact, 'key not applied');
  assert.match(
    r.detail,
    /a2's overlay key changed at .*; h2 has not applied/,
    "h2 holds a2's key on the path a1, h1, h2, a2",
  );
  assert.match(r.remedy!, /owed and not delivered/);
  await a`update assignment.outbox set delivered_at = now() where delivered_at is null`;
  r = await why(ctx, 'a1', 'a2');
  assert.is(r.fact, 'key not applied');
  assert.match(r.remedy!, /delivered and not yet applied/);
  await settle(ctx);
  assert.is((await why(ctx, 'a1', 'a2')).fact, 'path open');
});

Q('Q2: why names a declaration owed and not delivered', async (ctx) => {
  await addModule(ctx, 'more', [{ kind: 'directory', path: '/srv/more', mode: '0755' }]);
  await cli(ctx, 'assign', 'more', 'a1');
  const r = await why(ctx, 'a1', 'a2');
  assert.is(r.fact, 'declaration owed');
  assert.match(r.detail, /^a1 is owed declaration #\d+/);
  await settle(ctx);
  assert.is((await why(ctx, 'a1', 'a2')).fact, 'path open');
});

Q(
  'Q2, O4: a stranded spoke is carried by the hub of its group as the groups are counted again without the hub',
  async (ctx) => {
    // A third hub (group 2: block 2) and a spoke in block 4 (4 mod 3: h2's group now, 4 mod 2: h1's without h2).
    for (const [name, site, dialable, address] of [
      ['h3', 'c', 'h3.example.net:51820', '10.99.32.1'],
      ['e1', 'c', null, '10.99.64.5'],
    ] as const) {
      await ctx.mesh.store
        .admin`insert into inventory.node (name, site, dialable, identity_key, overlay_key, sealing_key, enrolled_at, last_seen)
             values (${name}, ${site}, ${dialable}, ${randomBytes(32)}, ${randomBytes(32)}, ${randomBytes(32)}, clock_timestamp(), now())`;
      await ctx.mesh.store.admin`insert into overlay.address (node, address) values (${name}, ${address}::inet)`;
    }
    await cli(ctx, 'overlay', 'hub', 'h3');
    const w = JSON.parse(await cli(ctx, 'overlay', 'what-if', '--down', 'h2', '--limit', '0', '--json'));
    assert.equal(
      w.stranded.map((s: { node: string; carriedBy: string }) => [s.node, s.carriedBy]),
      [
        ['a2', 'h3'],
        ['b2', 'h3'],
        ['d1', 'h3'],
        ['e1', 'h1'],
      ],
      'blocks 1 and 4 over the two hubs left: block 1 to h3 (the second by name), block 4 to h1',
    );
    assert.ok(
      w.pairs
        .filter((p: { node: string }) => p.node === 'e1')
        .every((p: { carriedBy: string }) => p.carriedBy === 'h1'),
    );
  },
);

Q.run();
