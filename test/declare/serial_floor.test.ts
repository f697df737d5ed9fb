// D2 when the kept declaration is lost: serials never go back. The host keeps
// its highest applied serial on its own (serial.json), asks the mesh at once
// when its kept file is refused or gone, and the mesh signs a floor into the
// last report (assignment.acknowledged_floor), so not even a rebuilt host
// applies the mesh's own, genuinely signed older declarations replayed to its queue.
import { suite } from '../harness/suite.js';
import { fresh } from '../../src/wire/declaration.js';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync, existsSync, rmSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { addModule, cli, b64, inject, until, liveNode, stopLiveNode, type LiveNode } from './helpers.js';
import { envelope } from '../../src/assignment/declare.js';

type Ctx = LiveNode;
const Floor = suite<Ctx>('serials never go back, even when the kept declaration is lost (D2)');

const conf = (ctx: Ctx) => join(ctx.root, 'web.conf');
const kept = (ctx: Ctx) => join(ctx.host.dir, 'declaration.signed');

async function version(ctx: Ctx, v: string, serial: number): Promise<void> {
  // The module change owes web1 its next declaration (W2): no declare typed.
  await addModule(ctx.mesh, 'web', [{ kind: 'file', path: conf(ctx), content: b64(v), mode: '0644' }]);
  await ctx.proc.waitFor(new RegExp(`applied declaration ${serial}\\b`), 20_000);
  await until(
    `serial ${serial} acknowledged`,
    async () =>
      (
        await ctx.mesh.store
          .admin`select 1 from assignment.declaration_status where node = 'web1' and serial = ${serial} and state = 'applied'`
      ).length > 0,
  );
}

Floor.before(async (ctx) => {
  Object.assign(ctx, await liveNode());
  await addModule(ctx.mesh, 'web', [{ kind: 'file', path: conf(ctx), content: b64('v1'), mode: '0644' }]);
  // Serial 1 is the node's firewall, owed at enrolment; the assignment owes 2 (v1), the change 3 (v2).
  await cli(ctx.mesh, 'assign', 'web', 'web1');
  await ctx.proc.waitFor(/applied declaration 2\b/, 20_000);
  await version(ctx, 'v2', 3);
});
Floor.after(async (ctx) => {
  await stopLiveNode(ctx);
});

const genuine = async (ctx: Ctx, serial: number) =>
  (
    await ctx.mesh.store.admin`select envelope from assignment.declaration where node = 'web1' and serial = ${serial}`
  )[0]!.envelope as Buffer;

/** The host is stopped, its disk is damaged by DAMAGE, serial 2 waits on its queue, and the host starts again. */
async function restartWithReplay(ctx: Ctx, damage: () => void): Promise<{ mark: number; smark: number }> {
  await ctx.proc.stop();
  damage();
  // Queued before the host is back: judged in the same moment the host learns (or not) where its floor is.
  await inject(ctx.mesh, 'web1', await genuine(ctx, 2));
  const smark = ctx.serve.output().length;
  ctx.proc = ctx.host.run();
  return { mark: 0, smark };
}

/** Serial 2 was refused as a replay, said by the host and recorded by the mesh; the machine and the mesh's view did not go back. */
async function refusedAsReplay(ctx: Ctx, at: { mark: number; smark: number }, why: RegExp): Promise<void> {
  await ctx.proc.waitFor(new RegExp(`refused a declaration: replayed: serial 2 ${why.source}`), 20_000, at.mark);
  await ctx.serve.waitFor(/report: web1 refused a declaration \(serial 2\): replayed: /, 20_000, at.smark);
  await ctx.proc.waitFor(/applied declaration 3\b/, 20_000, at.mark);
  assert.not.match(ctx.proc.output().slice(at.mark), /applied declaration 2\b/, 'serial 2 never applied');
  assert.is(readFileSync(conf(ctx), 'utf8'), 'v2', 'the machine did not go back');
  await until(
    'the report of 3 again',
    async () =>
      (await ctx.mesh.store.admin`select 1 from inventory.report where node = 'web1' and serial = 3`).length > 0,
  );
  const [st] = await ctx.mesh.store.admin`select state, reported_serial from inventory.node_status where name = 'web1'`;
  assert.is(Number(st!.reported_serial), 3, 'node_status still says 3');
  assert.is(st!.state, 'here');
  const list = JSON.parse(await cli(ctx.mesh, 'node', 'list', '--json')) as { name: string; reported_serial: number }[];
  assert.is(Number(list.find((n) => n.name === 'web1')!.reported_serial), 3, 'node list still says 3');
}

Floor(
  'a different declaration carrying the serial already applied is refused as a replay, not only older ones',
  async (ctx) => {
    const mark = ctx.proc.output().length;
    const smark = ctx.serve.output().length;
    const evil = join(ctx.root, 'evil');
    const body = JSON.stringify({
      mesh: ctx.mesh.signer.mesh,
      node: 'web1',
      serial: 3,
      ...fresh(),
      resources: [{ kind: 'file', id: `file:${evil}`, path: evil, content: b64('x'), mode: '0644' }],
    });
    await inject(ctx.mesh, 'web1', envelope(body, ctx.mesh.signer));
    await ctx.proc.waitFor(
      /refused a declaration: replayed: serial 3 is not newer than 3, the one applied/,
      10_000,
      mark,
    );
    await ctx.serve.waitFor(/report: web1 refused a declaration \(serial 3\): replayed: /, 10_000, smark);
    assert.not.ok(existsSync(evil));
  },
);

Floor(
  'kept declaration damaged by one byte: refused, the mesh asked at once, and serial 2 replayed is refused (D2)',
  async (ctx) => {
    const at = await restartWithReplay(ctx, () => {
      const b = readFileSync(kept(ctx));
      b[b.indexOf('resources')] ^= 0x20; // one byte of the signed body: 'r' becomes 'R'
      writeFileSync(kept(ctx), b);
    });
    await ctx.proc.waitFor(/refusing the kept declaration: forged/, 20_000);
    await ctx.proc.waitFor(
      /no valid kept declaration \(highest applied: serial 3\): asking the mesh for its newest declaration and floor now/,
      20_000,
    );
    await refusedAsReplay(ctx, at, /is (below 3|not newer than 3)/);
  },
);

Floor('kept declaration deleted: the mesh asked at once, and serial 2 replayed is refused (D2)', async (ctx) => {
  const at = await restartWithReplay(ctx, () => rmSync(kept(ctx)));
  await ctx.proc.waitFor(/asking the mesh for its newest declaration and floor now/, 20_000);
  await refusedAsReplay(ctx, at, /is (below 3|not newer than 3)/);
});

Floor("the host's own mark holds where the mesh's floor is behind (serial.json, D2)", async (ctx) => {
  // The report of 3 not yet recorded when the kept file was lost: the mesh's floor is 2.
  await ctx.mesh.store
    .admin`update assignment.declaration set acknowledged_at = null where node = 'web1' and serial = 3`;
  const at = await restartWithReplay(ctx, () => rmSync(kept(ctx)));
  await refusedAsReplay(ctx, at, /is not newer than 3, the one applied/);
});

Floor(
  'a rebuilt host (state wiped) is handed the floor with its last report, and refuses serial 2 (D2, R2)',
  async (ctx) => {
    const at = await restartWithReplay(ctx, () => {
      // Everything but who it is: nothing on the machine remembers serial 3.
      for (const f of readdirSync(ctx.host.dir))
        if (f !== 'identity.json' && f !== 'overlay.key')
          rmSync(join(ctx.host.dir, f), { recursive: true, force: true });
    });
    await ctx.proc.waitFor(/no record of what this machine holds: asking the mesh/, 20_000);
    await ctx.serve.waitFor(
      /recover: handed web1 its newest declaration and last report \(.*floor serial 3\)/,
      20_000,
      at.smark,
    );
    await refusedAsReplay(ctx, at, /is below 3, the newest this node acknowledged/);
    // And after: serial 2 again, now against what it applied.
    const mark = ctx.proc.output().length;
    await inject(ctx.mesh, 'web1', await genuine(ctx, 2));
    await ctx.proc.waitFor(/refused a declaration: replayed: serial 2/, 10_000, mark);
    assert.is(readFileSync(conf(ctx), 'utf8'), 'v2');
  },
);

Floor(
  'at the serial of the signed floor, only the declaration acknowledged there passes: another digest is refused (D2)',
  async (ctx) => {
    // Two genuinely signed declarations of one serial (as after a restore of the store): a rebuilt host
    // remembers neither, so only the floor's digest tells them apart.
    const evil = join(ctx.root, 'evil-at-floor');
    const other = envelope(
      JSON.stringify({
        mesh: ctx.mesh.signer.mesh,
        node: 'web1',
        serial: 3,
        ...fresh(),
        resources: [{ kind: 'file', id: `file:${evil}`, path: evil, content: b64('x'), mode: '0644' }],
      }),
      ctx.mesh.signer,
    );
    await ctx.proc.stop();
    for (const f of readdirSync(ctx.host.dir))
      if (f !== 'identity.json' && f !== 'overlay.key') rmSync(join(ctx.host.dir, f), { recursive: true, force: true });
    await inject(ctx.mesh, 'web1', other);
    const smark = ctx.serve.output().length;
    ctx.proc = ctx.host.run();
    await ctx.proc.waitFor(
      /refused a declaration: replayed: serial 3 is not the declaration this node acknowledged at that serial \(the mesh's signed floor\)/,
      20_000,
    );
    await ctx.serve.waitFor(/report: web1 refused a declaration \(serial 3\): replayed/, 20_000, smark);
    await ctx.proc.waitFor(/applied declaration 3\b/, 20_000);
    assert.not.ok(existsSync(evil), 'the other declaration of serial 3 was never applied');
    assert.is(readFileSync(conf(ctx), 'utf8'), 'v2', 'the acknowledged one holds');
  },
);

Floor.run();
