// What-if and why (Q2), at the store: the answers are read from the graph the
// declarations carry (overlay.route_members, the peer rules of O1), the
// firewall composed from it (X2) and what was declared, owed and reported.
// A fleet of two hubs at sites a and c, spokes behind NAT at a, b and c, and
// a dialable non-hub at b; each case changes one fact and asks again. The
// real pings that must agree with these answers are the lab's (scenario
// what-if).
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

const NODES = [
  ['h1', 'a', 'h1.example.net:51820'],
  ['h2', 'c', 'h2.example.net:51820'],
  ['a1', 'a', null],
  ['a2', 'a', null],
  ['b1', 'b', null],
  ['b2', 'b', null],
  ['d1', 'b', 'd1.example.net:51820'],
  ['c1', 'c', null],
] as const;

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
  for (const [name, site, dialable] of NODES)
    await ctx.mesh.store
      .admin`insert into inventory.node (name, site, dialable, identity_key, overlay_key, sealing_key, enrolled_at, last_seen)
             values (${name}, ${site}, ${dialable}, ${randomBytes(32)}, ${randomBytes(32)}, ${randomBytes(32)}, clock_timestamp(), now())`;
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
  'Q2: what-if --down h1 strands the spokes routing through it, and every pair of them that is not peered',
  async (ctx) => {
    const w = JSON.parse(await cli(ctx, 'overlay', 'what-if', '--down', 'h1', '--limit', '0', '--json'));
    assert.equal(
      w.stranded.map((s: { node: string; hub: string; carriedBy: string }) => [s.node, s.hub, s.carriedBy]),
      ['a1', 'a2', 'b1', 'b2', 'd1'].map((n) => [n, 'h1', 'h2']),
      "h1 is the route hub of its site's spokes and, by name, of site b's; h2 would carry them",
    );
    const pairs = w.pairs.map((p: { node: string; peer: string }) => `${p.node}>${p.peer}`);
    const group = ['a1', 'a2', 'b1', 'b2', 'd1'];
    const peered = new Set(['b1>d1', 'd1>b1', 'b2>d1', 'd1>b2']); // site b, d1 dialable: direct
    const want = group
      .flatMap((a) => group.filter((b) => b !== a).map((b) => `${a}>${b}`))
      .filter((p) => !peered.has(p));
    assert.equal(pairs.sort(), want.sort(), 'the lost pairs: the stranded spokes less their direct peers');
    assert.is(w.pairsTotal, want.length, 'strand_spokes counts the pairs lose_paths lists');
    assert.ok(
      w.pairs.every((p: { carriedBy: string }) => p.carriedBy === 'h2'),
      'h2 carries them once h1 is out',
    );
    assert.equal(
      w.openings.map((o: { node: string; port: number; fromNode: string; lostHub: string }) => [
        o.node,
        o.port,
        o.fromNode,
        o.lostHub,
      ]),
      [['a2', 8080, 'a1', 'h1']],
      "a2's opening to site a loses a1 (h1 itself is down, not a source that lost its path)",
    );
  },
);

Q('Q2: what-if --down h1,h2 leaves no hub to carry anyone; a spoke alone strands nothing', async (ctx) => {
  const w = JSON.parse(await cli(ctx, 'overlay', 'what-if', '--down', 'h1,h2', '--json'));
  assert.ok(w.stranded.some((s: { node: string }) => s.node === 'c1'));
  assert.ok(w.stranded.every((s: { carriedBy: string | null }) => s.carriedBy === null));
  assert.is(w.carried, false);
  const text = await cli(ctx, 'overlay', 'what-if', '--down', 'h1,h2');
  assert.match(text, /no other hub would carry/);
  const alone = JSON.parse(await cli(ctx, 'overlay', 'what-if', '--down', 'a1', '--json'));
  assert.is(alone.pairsTotal, 0);
  assert.equal(alone.stranded, []);
});

Q('Q2: what-if refuses names the overlay does not hold (MSHY1) and none at all (MSHY0)', async (ctx) => {
  let r = await ctx.mesh.cli(['overlay', 'what-if', '--down', 'nosuch', '--json']);
  assert.is(r.code, 1);
  assert.is(JSON.parse(r.stdout).error.code, 'MSHY1');
  r = await ctx.mesh.cli(['overlay', 'what-if', '--json']);
  assert.is(JSON.parse(r.stdout).error.code, 'MSHY0');
  r = await ctx.mesh.cli(['overlay', 'why', 'a1', 'a1', '--json']);
  assert.is(JSON.parse(r.stdout).error.code, 'MSHY2');
  r = await ctx.mesh.cli(['overlay', 'why', 'a1', 'a2', '--port', '70000', '--json']);
  assert.is(JSON.parse(r.stdout).error.code, 'MSHY3');
  r = await ctx.mesh.cli(['overlay', 'what-if', '--down', 'h1', '--limit', 'x', '--json']);
  assert.is(JSON.parse(r.stdout).error.code, 'MSHY4');
});

Q('Q2: why says path open through the hub, and names no edge between spokes of different route hubs', async (ctx) => {
  const open = await why(ctx, 'a1', 'a2');
  assert.is(open.fact, 'path open');
  assert.match(open.detail, /through hub h1/);
  assert.is((await why(ctx, 'b1', 'd1')).fact, 'path open', 'peers at one site');
  const none = await why(ctx, 'c1', 'a1');
  assert.is(none.fact, 'no edge', 'c1 routes through h2, a1 through h1: a1 accepts c1 only from h1');
  assert.match(none.detail, /c1 routes through h2, a1 through h1/);
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

Q('Q2: why names an end out of touch, the hub between them included', async (ctx) => {
  const a = ctx.mesh.store.admin;
  await a`update inventory.node set last_seen = now() - interval '10 minutes' where name = 'h1'`;
  const r = await why(ctx, 'a1', 'a2');
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
  assert.match(r.detail, /a2's overlay key changed at .*; h1 has not applied/);
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

Q.run();
