// Every node's firewall, derived in SQL from what the mesh knows (X2): ssh
// everywhere, WireGuard where a node is dialled, a provision's consumers to
// its provider's port over the overlay and nobody else, a module's served
// ports from where it says; each opening with its reason, the same in the
// DBA view, `mesh firewall show` and the declaration a host parses.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { freshMesh, type Mesh } from '../harness/mesh.js';
import { cli } from '../declare/helpers.js';
import { threeSites, firewallOf, rule, address } from './fleet.js';
import type { FirewallRule } from '../../src/wire/resources.js';

interface Ctx {
  mesh: Mesh;
  dir: string;
}
const Fw = suite<Ctx>('firewall in SQL (X2)');

Fw.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.dir = mkdtempSync(join(tmpdir(), 'fw-sql-'));
  await threeSites(ctx.mesh);
});
Fw.after(async (ctx) => {
  await ctx.mesh.stop();
});

async function moduleFile(ctx: Ctx, name: string, resources: unknown[]): Promise<string> {
  const f = join(ctx.dir, `${name}.json`);
  writeFileSync(f, JSON.stringify({ name, resources }));
  return f;
}

async function addModule(ctx: Ctx, name: string, resources: unknown[], ...nodes: string[]): Promise<void> {
  await cli(ctx.mesh, 'module', 'add', await moduleFile(ctx, name, resources));
  for (const n of nodes) await cli(ctx.mesh, 'assign', name, n);
}

Fw('X1: every node keeps ssh open from anywhere; only the dialable node opens WireGuard', async (ctx) => {
  for (const n of ['hub', 'b1', 'b2', 'c1']) {
    const fw = await firewallOf(ctx.mesh, n);
    assert.equal(rule(fw, 22), [{ proto: 'tcp', port: 22, why: 'ssh' }], `${n} ssh`);
  }
  assert.equal(rule(await firewallOf(ctx.mesh, 'hub'), 51820), [{ proto: 'udp', port: 51820, why: 'WireGuard' }]);
  assert.equal(rule(await firewallOf(ctx.mesh, 'b1'), 51820), [], 'a node behind NAT dials out and needs no opening');
});

Fw("O2: every overlay member's firewall names the overlay interface its forward chain guards", async (ctx) => {
  for (const n of ['hub', 'b1', 'b2', 'c1']) assert.is((await firewallOf(ctx.mesh, n)).forward, 'mesh0', n);
});

Fw("X2: a provision's consumers reach the provider's port over the overlay, and nobody else does", async (ctx) => {
  await addModule(ctx, 'db', [{ kind: 'directory', path: '/srv/db', mode: '0755' }], 'b1');
  await addModule(ctx, 'app', [{ kind: 'directory', path: '/srv/app', mode: '0755' }], 'b2', 'c1');
  // As offer and grant record them; `mesh provision grant` would also make and
  // send the pair's credential, and these nodes have no queue to be told on.
  await ctx.mesh.store
    .admin`select provision.offer('pg', 'postgres', 'db', '{"host": "db.internal", "port": 5432}'::jsonb)`;
  await ctx.mesh.store.admin`select provision.grant('pg', 'app', '{"database": "app", "user": "app_pg"}'::jsonb)`;
  const rules = rule(await firewallOf(ctx.mesh, 'b1'), 5432);
  assert.equal(rules, [
    {
      proto: 'tcp',
      port: 5432,
      from: [await address(ctx.mesh, 'b2'), await address(ctx.mesh, 'c1')].sort(),
      via: 'mesh0',
      why: 'provision pg: consumer app',
    },
  ]);
  for (const n of ['hub', 'b2', 'c1'])
    assert.equal(rule(await firewallOf(ctx.mesh, n), 5432), [], `${n} provides nothing`);
  // Unassign a consumer: its address leaves the provider's rule.
  await cli(ctx.mesh, 'unassign', 'app', 'c1');
  assert.equal(rule(await firewallOf(ctx.mesh, 'b1'), 5432)[0]!.from, [await address(ctx.mesh, 'b2')]);
});

Fw(
  "X2: a route's consumer admits its port from the proxy's nodes over the overlay, from no other node; with no proxy running, from nobody",
  async (ctx) => {
    await addModule(ctx, 'proxy', [{ kind: 'directory', path: '/srv/proxy', mode: '0755' }], 'hub');
    await addModule(ctx, 'proxy2', [{ kind: 'directory', path: '/srv/proxy2', mode: '0755' }], 'c1');
    await addModule(ctx, 'site', [{ kind: 'directory', path: '/srv/site', mode: '0755' }], 'b2');
    // As offer and grant record them (`mesh provision offer` and `grant` would also declare at once).
    for (const [route, proxy, name, port] of [
      ['www', 'proxy', 'site.example', 8080],
      ['www2', 'proxy2', 'other.example', 8081],
    ] as const) {
      await ctx.mesh.store.admin`select provision.offer(${route}, 'route', ${proxy}, '{}'::jsonb)`;
      await ctx.mesh.store
        .admin`select provision.grant(${route}, 'site', ${ctx.mesh.store.admin.json({ name, port })}::jsonb)`;
    }
    const site = await firewallOf(ctx.mesh, 'b2');
    assert.equal(rule(site, 8080), [
      {
        proto: 'tcp',
        port: 8080,
        from: [await address(ctx.mesh, 'hub')],
        via: 'mesh0',
        why: 'route www: proxy to site',
      },
    ]);
    // Another route to the same consumer opens its own port from its own proxy, and neither proxy reaches the other's.
    assert.equal(rule(site, 8081), [
      {
        proto: 'tcp',
        port: 8081,
        from: [await address(ctx.mesh, 'c1')],
        via: 'mesh0',
        why: 'route www2: proxy to site',
      },
    ]);
    for (const n of ['hub', 'b1', 'c1'])
      assert.equal(rule(await firewallOf(ctx.mesh, n), 8080), [], `${n} consumes nothing`);
    // The proxy runs nowhere: no node may reach the consumer's port, so it is not opened at all.
    await cli(ctx.mesh, 'unassign', 'proxy', 'hub');
    assert.equal(rule(await firewallOf(ctx.mesh, 'b2'), 8080), []);
    assert.equal(rule(await firewallOf(ctx.mesh, 'b2'), 8081).length, 1, 'the other route stays open');
  },
);

Fw(
  "X2: a module's served ports open from any, from a site, or from a module's nodes; openings never reach a node as resources",
  async (ctx) => {
    await addModule(
      ctx,
      'web',
      [
        { kind: 'opening', name: 'https', proto: 'tcp', port: 443, from: 'any' },
        {
          kind: 'opening',
          name: 'metrics',
          proto: 'tcp',
          port: 9100,
          to: 9102,
          from: 'site:b',
          why: 'metrics for site b',
        },
        { kind: 'opening', name: 'admin', proto: 'tcp', port: 8443, from: 'module:app' },
      ],
      'hub',
    );
    const fw = await firewallOf(ctx.mesh, 'hub');
    assert.equal(rule(fw, 443), [{ proto: 'tcp', port: 443, why: 'module web: https from any' }]);
    assert.equal(rule(fw, 9100), [
      {
        proto: 'tcp',
        port: 9100,
        to: 9102,
        from: [await address(ctx.mesh, 'b1'), await address(ctx.mesh, 'b2')].sort(),
        via: 'mesh0',
        why: 'metrics for site b',
      },
    ]);
    assert.equal(rule(fw, 8443), [
      {
        proto: 'tcp',
        port: 8443,
        from: [await address(ctx.mesh, 'b2')],
        via: 'mesh0',
        why: 'module web: admin from module:app',
      },
    ]);
    const plan = JSON.parse(await cli(ctx.mesh, 'plan', 'hub', '--json')) as { resources: { kind: string }[] };
    assert.equal(
      plan.resources.filter((r) => r.kind === 'opening'),
      [],
    );
  },
);

Fw(
  'X2: an opening from a module that runs nowhere is listed with its reason and left out of the table',
  async (ctx) => {
    await addModule(
      ctx,
      'lonely',
      [{ kind: 'opening', name: 'x', proto: 'udp', port: 6000, from: 'module:nowhere' }],
      'c1',
    );
    assert.equal(rule(await firewallOf(ctx.mesh, 'c1'), 6000), []);
    const shown = JSON.parse(await cli(ctx.mesh, 'firewall', 'show', 'c1', '--json')) as {
      openings: { port: number; inTable: boolean; reason: string }[];
    };
    const x = shown.openings.find((o) => o.port === 6000)!;
    assert.is(x.inTable, false);
    assert.match(x.reason, /module lonely serves x/);
  },
);

Fw('the DBA view, mesh firewall show and the declaration say the same openings, each with a reason', async (ctx) => {
  const view = await ctx.mesh.store
    .admin`select proto, port, why, reason from assignment.firewall_opening where node = 'b1' order by proto, port, why`;
  assert.ok(view.length >= 2);
  for (const v of view) assert.ok((v.reason as string).length > 0, `${v.port} has a reason`);
  const shown = JSON.parse(await cli(ctx.mesh, 'firewall', 'show', 'b1', '--json')) as {
    openings: { proto: string; port: number; why: string }[];
  };
  assert.equal(
    shown.openings.map((o) => `${o.proto} ${o.port} ${o.why}`).sort(),
    view.map((v) => `${v.proto} ${v.port} ${v.why}`).sort(),
  );
  const fw = await firewallOf(ctx.mesh, 'b1');
  assert.equal(
    fw.rules.map((r: FirewallRule) => `${r.proto} ${r.port} ${r.why}`).sort(),
    view.map((v) => `${v.proto} ${v.port} ${v.why}`).sort(),
  );
  const human = await cli(ctx.mesh, 'firewall', 'show', 'b1');
  assert.match(human, /input dropped unless loopback/);
  assert.match(human, /provision pg \(postgres\): consumer module app on b2/);
});

// Composing leaves the peer graph out of the reasons (it is costly and no rule reads it): show must still say it.
Fw(
  'the WireGuard opening says which peers dial it, in the view and in mesh firewall show; the declaration opens the same port',
  async (ctx) => {
    const [wg] = await ctx.mesh.store
      .admin`select port, reason from assignment.firewall_opening where node = 'hub' and why = 'WireGuard'`;
    assert.is(wg!.reason, 'WireGuard: this node is dialable; dialled by b1, b2, c1');
    const shown = JSON.parse(await cli(ctx.mesh, 'firewall', 'show', 'hub', '--json')) as {
      openings: { why: string; reason: string }[];
    };
    assert.is(shown.openings.find((o) => o.why === 'WireGuard')!.reason, wg!.reason);
    assert.equal(rule(await firewallOf(ctx.mesh, 'hub'), wg!.port as number), [
      { proto: 'udp', port: wg!.port as number, why: 'WireGuard' },
    ]);
  },
);

Fw("the ssh port is the mesh's to set, and every firewall follows it", async (ctx) => {
  await cli(ctx.mesh, 'firewall', 'ssh-port', '2222');
  for (const n of ['hub', 'b1']) {
    const fw = await firewallOf(ctx.mesh, n);
    assert.equal(rule(fw, 2222), [{ proto: 'tcp', port: 2222, why: 'ssh' }]);
    assert.equal(rule(fw, 22), []);
  }
  const r = await ctx.mesh.cli(['firewall', 'ssh-port', '70000']);
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /not a port number: give a port from 1 to 65535 \(MSH65\)/);
  await cli(ctx.mesh, 'firewall', 'ssh-port', '22');
});

Fw('X2: mesh module add refuses a hostile opening, naming the field, and stores nothing', async (ctx) => {
  for (const [bad, field] of [
    [{ port: 70000 }, /\.port/],
    [{ port: 80, to: 79 }, /\.to/],
    [{ from: 'site:b" accept' }, /\.from/],
    [{ why: 'x"; flush ruleset' }, /\.why/],
    [{ name: 'a b' }, /\.name/],
  ] as const) {
    const base: Record<string, unknown> = { kind: 'opening', name: 'e', proto: 'tcp', port: 80, from: 'any' };
    const f = await moduleFile(ctx, 'evil', [{ ...base, ...bad }]);
    const r = await ctx.mesh.cli(['module', 'add', f]);
    assert.is.not(r.code, 0, JSON.stringify(bad));
    assert.match(r.stderr, field, r.stderr);
  }
  assert.is((await ctx.mesh.store.admin`select name from catalogue.module where name = 'evil'`).length, 0);
});

Fw(
  'a few nodes composed alone are what composing the fleet gives them; past 1,000 names the views are read whole',
  async (ctx) => {
    const a = ctx.mesh.store.admin;
    const OPENINGS = (names: string[] | null) => a`select node, proto, port, port_to, sources, via, why, origin
      from assignment.firewall_openings_of(${names}::text[], false) order by node, proto, port, why, sources::text`;
    const COMPOSE = (names: string[] | null) =>
      a`select node, resources from assignment.compose_each(${names}::text[]) order by node`;
    const plain = (rows: readonly Record<string, unknown>[]) => rows.map((r) => ({ ...r }));
    // An opening from a module whose nodes nothing else of b1's names: its sources come from that module alone.
    await addModule(
      ctx,
      'watch',
      [{ kind: 'opening', name: 'w', proto: 'tcp', port: 7070, from: 'module:lonely' }],
      'b1',
    );
    const fleet = plain(await COMPOSE(null));
    const openings = plain(await OPENINGS(null));
    assert.equal(
      openings.filter((o) => o.node === 'b1' && o.port === 7070).map((o) => o.sources),
      [[await address(ctx.mesh, 'c1')]],
      "b1's opening from module lonely admits c1",
    );
    // The fixture holds what the named lookup must still find: a provision's and a route's openings, a module's.
    for (const why of [/^provision pg/, /^route www/, /^web serves|^module web/])
      assert.ok(
        openings.some((o) => why.test(String(o.why))),
        `an opening matching ${why} in the fixture`,
      );
    for (const { node } of fleet) {
      const n = node as string;
      assert.equal(
        plain(await COMPOSE([n])),
        fleet.filter((r) => r.node === n),
        `${n} composed alone`,
      );
      assert.equal(
        plain(await OPENINGS([n])),
        openings.filter((o) => o.node === n),
        `${n}'s openings alone`,
      );
    }
    const many = [...fleet.map((r) => r.node as string), ...Array.from({ length: 1000 }, (_, i) => `ghost-${i}`)];
    assert.equal(plain(await COMPOSE(many)), fleet, 'the fleet named among 1,000 names no node has');
    assert.equal(plain(await OPENINGS(many)), openings);
  },
);

Fw.run();
