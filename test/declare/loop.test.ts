// The loop end to end: declare, verify, apply, keep, report, on real servers
// and a real mesh-host process (D1-D4, R1, R2).
import { suite } from '../harness/suite.js';
import { fresh } from '../../src/wire/declaration.js';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync, existsSync, rmSync, statSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { addModule, cli, b64, inject, until, liveNode, stopLiveNode, type LiveNode } from './helpers.js';
import { signingPair } from '../../src/crypto/keys.js';
import { envelope } from '../../src/assignment/declare.js';

type Ctx = LiveNode;
const Loop = suite<Ctx>('told, apply, report');

Loop.before(async (ctx) => {
  Object.assign(ctx, await liveNode());
});
Loop.after(async (ctx) => {
  await stopLiveNode(ctx);
});

const starts = (ctx: Ctx) =>
  existsSync(join(ctx.root, 'starts')) ? readFileSync(join(ctx.root, 'starts'), 'utf8').trim().split('\n').length : 0;

function webModule(ctx: Ctx, content: string) {
  return [
    { kind: 'file', path: join(ctx.root, 'web.conf'), content: b64(content), mode: '0644' },
    {
      kind: 'service',
      name: 'web',
      exec: ['/bin/sh', '-c', `echo started >> ${join(ctx.root, 'starts')}; exec sleep 1000`],
      restartOn: [`file:${join(ctx.root, 'web.conf')}`],
    },
  ];
}

async function applied(ctx: Ctx, serial: number): Promise<void> {
  await ctx.proc.waitFor(new RegExp(`applied declaration ${serial}\\b`), 20_000);
  await until(
    `report of ${serial}`,
    async () =>
      (await ctx.mesh.store.admin`select serial from inventory.report where node = 'web1' and serial = ${serial}`)
        .length > 0,
  );
}

Loop(
  'a file and a service are declared, applied and reported; the report shows in SQL and node list (R2)',
  async (ctx) => {
    await addModule(ctx.mesh, 'web', webModule(ctx, 'v1'));
    // The assignment itself owes web1 its declaration (W2): no declare typed.
    const out = JSON.parse(await cli(ctx.mesh, 'assign', 'web', 'web1', '--json'));
    assert.equal(
      out.redeclared.map((d: { node: string; serial: number }) => [d.node, d.serial]),
      [['web1', 2]],
    );
    assert.ok(out.redeclared[0].queued);
    await applied(ctx, 2);
    assert.is(readFileSync(join(ctx.root, 'web.conf'), 'utf8'), 'v1');
    await until('service started', async () => starts(ctx) === 1);
    const [rep] = await ctx.mesh.store.admin`select held from inventory.report where node = 'web1'`;
    assert.equal((rep!.held as { id: string }[]).map((h) => h.id).sort(), [
      `file:${join(ctx.root, 'web.conf')}`,
      'firewall:mesh',
      'service:web',
    ]);
    const list = JSON.parse(await cli(ctx.mesh, 'node', 'list', '--json'));
    assert.is(list[0].holds, 3); // the file, the service and the node's firewall (X1)
    assert.is(list[0].reported_serial, 2);
    const [st] = await ctx.mesh.store
      .admin`select state from assignment.declaration_status where node = 'web1' and serial = 2`;
    assert.is(st!.state, 'applied');
  },
);

Loop('a changed file restarts its service in that apply, and not in the next (D4)', async (ctx) => {
  await addModule(ctx.mesh, 'web', webModule(ctx, 'v2'));
  await applied(ctx, 3);
  await until('restart', async () => starts(ctx) === 2);
  await cli(ctx.mesh, 'declare', 'web1');
  await applied(ctx, 4);
  await new Promise((r) => setTimeout(r, 500));
  assert.is(starts(ctx), 2, 'no restart when nothing changed');
});

Loop('plan, plan --json and declare give the same bytes', async (ctx) => {
  const before = Math.floor(Date.now() / 1000);
  const planned = (await cli(ctx.mesh, 'plan', 'web1', '--json')).trim();
  const human = await cli(ctx.mesh, 'plan', 'web1');
  assert.match(human, /declaration 5 for web1/);
  assert.match(human, /service:web\s+service/);
  await cli(ctx.mesh, 'declare', 'web1');
  const after = Math.ceil(Date.now() / 1000);
  const [d] = await ctx.mesh.store
    .admin`select envelope from assignment.declaration where node = 'web1' and serial = 5`;
  // The same bytes but for when it was signed: plan says when it would be, had it been declared then.
  const when = /"signed":(\d+),"expires":(\d+),/;
  const declared = JSON.parse((d!.envelope as Buffer).toString()).body as string;
  assert.is(declared.replace(when, ''), planned.replace(when, ''));
  const [p, q] = [when.exec(planned)!, when.exec(declared)!];
  // Each was signed (or would be) while its own command ran, in order, with the same lifetime:
  // bounded by the clock around the commands, not by how long a loaded machine took.
  const [ps, pe, qs, qe] = [p[1], p[2], q[1], q[2]].map(Number) as [number, number, number, number];
  assert.ok(
    before <= ps && ps <= qs && qs <= after && qe - qs === pe - ps,
    `${p[0]} then ${q[0]}, run ${before}..${after}`,
  );
  await applied(ctx, 5);
});

async function refused(ctx: Ctx, bytes: Buffer, fault: RegExp): Promise<void> {
  const mark = ctx.proc.output().length;
  const smark = ctx.serve.output().length;
  await inject(ctx.mesh, 'web1', bytes);
  await ctx.proc.waitFor(fault, 10_000, mark);
  await ctx.serve.waitFor(
    new RegExp(`web1 refused a declaration.*${fault.source.replace(/^refused a declaration: /, '')}`),
    10_000,
    smark,
  );
}

function bodyWith(ctx: Ctx, edit: (b: Record<string, unknown>) => void): string {
  const b: Record<string, unknown> = {
    mesh: ctx.mesh.signer.mesh,
    node: 'web1',
    serial: 99,
    ...fresh(),
    resources: [
      {
        kind: 'file',
        id: `file:${join(ctx.root, 'evil')}`,
        path: join(ctx.root, 'evil'),
        content: b64('x'),
        mode: '0644',
      },
    ],
  };
  edit(b);
  return JSON.stringify(b);
}

Loop('forged: signed by another key (D1)', async (ctx) => {
  const report = () =>
    ctx.mesh.store.admin`select serial, held::text as held, reported_at from inventory.report where node = 'web1'`;
  const before = await report();
  await refused(
    ctx,
    envelope(
      bodyWith(ctx, () => {}),
      { ...ctx.mesh.signer, secret: signingPair().secret },
    ),
    /refused a declaration: forged: declaration is not signed by the key.*\(MSHN1\)\./,
  );
  assert.not.ok(existsSync(join(ctx.root, 'evil')));
  // R3: a refusal moves last_seen and nothing else; it is no account of what the node holds.
  assert.equal(await report(), before);
});

Loop('forged: the right key, but for another mesh or another node', async (ctx) => {
  await refused(
    ctx,
    envelope(
      bodyWith(ctx, (b) => {
        b.mesh = '0123456789abcdef';
      }),
      ctx.mesh.signer,
    ),
    /refused a declaration: forged: declaration is for mesh 0123456789abcdef.*\(MSHN4\)\./,
  );
  await refused(
    ctx,
    envelope(
      bodyWith(ctx, (b) => {
        b.node = 'web2';
      }),
      ctx.mesh.signer,
    ),
    /refused a declaration: forged: declaration is for node web2.*\(MSHN4\)\./,
  );
  assert.not.ok(existsSync(join(ctx.root, 'evil')));
});

Loop('malformed: not parseable, or the wrong shape, is said differently from forged', async (ctx) => {
  await refused(
    ctx,
    Buffer.from('{not json'),
    /refused a declaration: malformed: declaration is not JSON.*\(MSHN0\)\./,
  );
  await refused(
    ctx,
    envelope(
      bodyWith(ctx, (b) => {
        b.resources = 'all of them';
      }),
      ctx.mesh.signer,
    ),
    /refused a declaration: malformed: declaration\.resources must be a list/,
  );
  await refused(
    ctx,
    envelope(
      bodyWith(ctx, (b) => {
        (b.resources as Record<string, unknown>[])[0]!.path = '/etc/../etc/passwd';
      }),
      ctx.mesh.signer,
    ),
    /refused a declaration: malformed: .*path must be an absolute, normalised path.*\(MSHN0\)\./,
  );
  assert.not.ok(existsSync(join(ctx.root, 'evil')));
});

Loop('a replayed older serial is refused (D2)', async (ctx) => {
  const [d] = await ctx.mesh.store
    .admin`select envelope from assignment.declaration where node = 'web1' and serial = 3`;
  await refused(
    ctx,
    d!.envelope as Buffer,
    /refused a declaration: replayed: serial 3 is not newer than 5.*\(MSHN5\)\./,
  );
  assert.is(readFileSync(join(ctx.root, 'web.conf'), 'utf8'), 'v2');
});

Loop(
  'C2: a genuine, newer declaration that expired within the second before it arrived is refused as stale',
  async (ctx) => {
    // Signed 60 s ago for 60 s, in whole seconds: it expired within the second before it reaches the queue.
    const expired = fresh(60, Date.now() - 60_000);
    assert.ok(expired.expires * 1000 <= Date.now(), 'it has expired');
    await refused(
      ctx,
      envelope(
        bodyWith(ctx, (b) => Object.assign(b, expired)),
        ctx.mesh.signer,
      ),
      /refused a declaration: stale: serial 99 expired at .*, before it arrived.*\(MSHN3\)\./,
    );
    assert.not.ok(existsSync(join(ctx.root, 'evil')));
  },
);

Loop('a report the broker cannot route is said out loud, and sent again once it can (R1)', async (ctx) => {
  const ctrl = `/bindings/${ctx.mesh.vhost}/e/mesh/q/mesh.control`;
  assert.is((await ctx.mesh.mgmt('DELETE', `${ctrl}/report`)).status, 204);
  const mark = ctx.proc.output().length;
  await cli(ctx.mesh, 'declare', 'web1');
  const lost = await ctx.proc.waitFor(/could not route report (\w+) .*nothing receives reports/, 10_000, mark);
  const [before] = await ctx.mesh.store.admin`select serial from inventory.report where node = 'web1'`;
  assert.is(Number(before!.serial), 5);
  assert.is((await ctx.mesh.mgmt('POST', ctrl, { routing_key: 'report' })).status, 201);
  const back = ctx.proc.output().length;
  await cli(ctx.mesh, 'declare', 'web1');
  await applied(ctx, 7);
  // The returned report was kept, and went out again once something could receive it.
  await ctx.proc.waitFor(/report of declaration 6 confirmed by the broker/, 10_000, back);
  // Sent again as the same message (its id kept), so serve knows a resend of one it recorded from a new report.
  await until(
    'the resent report recorded under its first id',
    async () =>
      (
        await ctx.mesh.store
          .admin`select 1 from inventory.report_received where message_id = ${lost[1]!} and node = 'web1' and serial = 6`
      ).length === 1,
  );
});

Loop('a tampered kept declaration is refused when read back (D1)', async (ctx) => {
  await ctx.proc.stop();
  const kept = join(ctx.host.dir, 'declaration.signed');
  const env = JSON.parse(readFileSync(kept, 'utf8'));
  env.body = env.body.replace('"serial":7', '"serial":8');
  writeFileSync(kept, JSON.stringify(env));
  ctx.proc = ctx.host.run();
  await ctx.proc.waitFor(/refusing the kept declaration: forged/);
  await ctx.proc.waitFor(/connected to/);
});

Loop('a backlog is drained to the newest; the rest are reported superseded (D2)', async (ctx) => {
  await ctx.proc.stop();
  await addModule(ctx.mesh, 'web', webModule(ctx, 'v3'));
  // The module change owes 8; two explicit pushes queue 9 and 10 behind it.
  for (let i = 0; i < 2; i++) await cli(ctx.mesh, 'declare', 'web1');
  ctx.proc = ctx.host.run();
  await ctx.proc.waitFor(/applied declaration 10: .*superseded 8, 9/);
  await until('superseded recorded', async () => {
    const rows = await ctx.mesh.store
      .admin`select serial, state from assignment.declaration_status where node = 'web1' and serial >= 8 order by serial`;
    return rows.map((r) => r.state).join(',') === 'superseded,superseded,applied';
  });
  assert.is(readFileSync(join(ctx.root, 'web.conf'), 'utf8'), 'v3');
});

Loop('a resource left out of the next declaration is removed', async (ctx) => {
  await addModule(ctx.mesh, 'extra', [
    { kind: 'file', path: join(ctx.root, 'extra.txt'), content: b64('x'), mode: '0600' },
  ]);
  await cli(ctx.mesh, 'assign', 'extra', 'web1');
  await applied(ctx, 11);
  assert.ok(existsSync(join(ctx.root, 'extra.txt')));
  await cli(ctx.mesh, 'unassign', 'extra', 'web1');
  await applied(ctx, 12);
  assert.not.ok(existsSync(join(ctx.root, 'extra.txt')));
});

Loop('a rebuilt host is handed its declaration and last report, and removes the orphans (R2)', async (ctx) => {
  await addModule(ctx.mesh, 'extra', [
    { kind: 'file', path: join(ctx.root, 'orphan.txt'), content: b64('x'), mode: '0600' },
  ]);
  await cli(ctx.mesh, 'assign', 'extra', 'web1');
  await applied(ctx, 13);
  await ctx.proc.stop();
  await cli(ctx.mesh, 'unassign', 'extra', 'web1');
  // The machine loses its record of what it applied, and what it was told.
  rmSync(join(ctx.host.dir, 'applied.json'));
  rmSync(join(ctx.host.dir, 'declaration.signed'));
  assert.ok(existsSync(join(ctx.root, 'orphan.txt')));
  ctx.proc = ctx.host.run();
  await ctx.proc.waitFor(/removed 1 orphan\(s\) from before the rebuild: file:.*orphan\.txt/);
  assert.not.ok(existsSync(join(ctx.root, 'orphan.txt')));
  assert.ok(existsSync(join(ctx.root, 'web.conf')), 'what is still declared stays');
  // Its report of 14 is still on the way: the next test must not start with it in flight.
  await applied(ctx, 14);
});

Loop('heard moves last_seen and nothing else (R3)', async (ctx) => {
  // What this depends on: the previous test's report recorded and acknowledged,
  // so the snapshot below is not taken while that report is still arriving.
  await until('the newest declaration acknowledged', async () => {
    const [r] = await ctx.mesh.store.admin`select d.serial, s.state, r.serial as reported from assignment.declaration d
      join assignment.declaration_status s using (node, serial) left join inventory.report r on r.node = d.node
      where d.node = 'web1' order by d.serial desc limit 1`;
    return r && r.state === 'applied' && Number(r.reported) === Number(r.serial);
  });
  const [before] = await ctx.mesh.store
    .admin`select serial, held::text as held, reported_at from inventory.report where node = 'web1'`;
  await ctx.mesh.store.admin`update inventory.node set last_seen = now() - interval '10 minutes' where name = 'web1'`;
  await ctx.proc.stop();
  ctx.proc = ctx.host.run();
  await until(
    'heard',
    async () =>
      (await ctx.mesh.store.admin`select state from inventory.node_status where name = 'web1'`)[0]!.state === 'here',
  );
  // A restart is not news either: the host waits for the mesh to say which
  // package list it holds before sending one, and it holds this machine's.
  await ctx.proc.waitFor(/the mesh's record of this node arrived: .*package list (the same as here|none here)/, 20_000);
  // Anything the restart would send (a whole package list) goes out at connect: give it time to land.
  await new Promise((r) => setTimeout(r, 2000));
  const [after] = await ctx.mesh.store
    .admin`select serial, held::text as held, reported_at from inventory.report where node = 'web1'`;
  assert.equal(after, before);
  const heardLines = ctx.serve
    .output()
    .split('\n')
    .filter((l) => /heard/.test(l));
  assert.equal(heardLines, [], 'heard is silent in the log');
});

Loop('a credential is written 0600 on the machine, and put back to 0600 when widened by hand (S2)', async (ctx) => {
  const path = join(ctx.root, 'db.secret');
  const mark = ctx.proc.output().length;
  await cli(ctx.mesh, 'secret', 'make', 'dbpw', '--node', 'web1', '--path', path);
  await ctx.proc.waitFor(/applied declaration \d+: 1 changed/, 20_000, mark);
  const st = statSync(path);
  assert.is(st.mode & 0o7777, 0o600, 'the credential file is 0600 on disk');
  assert.is(st.uid, 0, 'owned by root');
  assert.ok(st.size > 0, 'it holds the credential');
  // Widened by hand: the next reconcile (one runs at every start) narrows it again.
  chmodSync(path, 0o644);
  await ctx.proc.stop();
  ctx.proc = ctx.host.run();
  await ctx.proc.waitFor(new RegExp(`reconciled declaration \\d+: put back secret:${path}`), 20_000);
  assert.is(statSync(path).mode & 0o7777, 0o600, 'put back to 0600');
});

Loop.run();
