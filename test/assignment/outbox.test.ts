// The outbox (W1, W2, W3) on a broker of this suite's own: a change owes
// exactly the nodes whose composition changed, and nothing when none did;
// with the broker stopped what is owed stays owed and says why, and is
// delivered when it returns; serve killed with SIGKILL in the middle of a
// drain loses nothing: the next serve re-sends what was not marked delivered.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { privateFleet, stopFleet, type PrivateFleet } from '../link/private_mesh.js';
import { adminApi } from '../harness/rabbitmq.js';
import type { Proc, Host } from '../harness/mesh.js';
import { b64, cli, until } from '../declare/helpers.js';
import { declare } from '../../src/assignment/declare.js';
import { readSigner } from '../../src/home/home.js';
import { NODE_QUEUE_KEEPS } from '../../src/broker/accounts.js';
import { VHOST } from '../../bundle/rabbitmq.js';

const NODES = ['n1', 'n2', 'n3', 'n4'];
const OWED = 1000; // declarations owed at once in the SIGKILL test

type Ctx = PrivateFleet;
const O = suite<Ctx>('the outbox (W1, W2, W3)');

O.before(async (ctx) => {
  // Serve's idle sweep every second, so a returning broker is found within the test's patience.
  process.env.MESH_SERVE_SWEEP_SECONDS = '1';
  process.env.MESH_SERVE_DRAIN_BATCH = '50';
  await privateFleet(ctx, NODES);
});

O.after(stopFleet);

function moduleFile(ctx: Ctx, name: string, content: string): string {
  const f = join(ctx.pm.home, `${name}.json`);
  writeFileSync(
    f,
    JSON.stringify({
      name,
      resources: [{ kind: 'file', path: join(ctx.root, `${name}.conf`), content: b64(content), mode: '0644' }],
    }),
  );
  return f;
}

const owedCount = async (ctx: Ctx) =>
  Number((await ctx.pm.store.admin`select count(*) from assignment.pending_delivery`)[0]!.count);
const allRows = async (ctx: Ctx) =>
  Number((await ctx.pm.store.admin`select count(*) from assignment.outbox`)[0]!.count);

/** Each node's newest serial in SQL. */
async function newest(ctx: Ctx): Promise<Record<string, number>> {
  const rows = await ctx.pm.store
    .admin`select node, max(serial)::int as serial from assignment.declaration group by node`;
  return Object.fromEntries(rows.map((r) => [r.node as string, r.serial as number]));
}

/** Until every node reported its newest serial applied. */
async function allAtNewest(ctx: Ctx): Promise<void> {
  const want = await newest(ctx);
  await until(
    `every node reports its newest serial ${JSON.stringify(want)}`,
    async () => {
      const rows = await ctx.pm.store.admin`select node, serial::int from inventory.report`;
      const got = Object.fromEntries(rows.map((r) => [r.node as string, r.serial as number]));
      return NODES.every((n) => got[n] === want[n]);
    },
    60_000,
  );
}

O(
  'a change that affects no composition owes nothing; one that does owes exactly the nodes it changed (W2)',
  async (ctx) => {
    const before = await allRows(ctx);
    const out = JSON.parse(await cli(ctx.pm, 'module', 'add', moduleFile(ctx, 'idle', 'x'), '--json'));
    assert.equal(out.redeclared, [], 'a module assigned nowhere changes no composition');
    assert.match(await cli(ctx.pm, 'module', 'add', moduleFile(ctx, 'idle', 'y')), /nothing to re-declare/);
    assert.is(await allRows(ctx), before, 'nothing was put in the outbox');

    const a = JSON.parse(await cli(ctx.pm, 'assign', 'idle', 'n2', '--json'));
    assert.equal(
      a.redeclared.map((d: { node: string }) => d.node),
      ['n2'],
      'only n2 changed',
    );
    assert.is(await allRows(ctx), before + 1);
    // Assigned again: no change, nothing owed.
    const again = JSON.parse(await cli(ctx.pm, 'assign', 'idle', 'n2', '--json'));
    assert.equal(again.redeclared, []);
    assert.is(await allRows(ctx), before + 1);
    await allAtNewest(ctx);
    await until('delivered', async () => (await owedCount(ctx)) === 0);
    assert.match(await cli(ctx.pm, 'outbox'), /nothing owed/);
  },
);

O(
  'broker stopped while declarations are owed: they stay owed with the reason, and are delivered when it returns (W1, W3)',
  async (ctx) => {
    const smark = ctx.serve.output().length;
    await ctx.pm.rabbit.halt();
    await cli(ctx.pm, 'module', 'add', moduleFile(ctx, 'web', 'v1'));
    const sent: string[] = [];
    for (const n of NODES) sent.push(await cli(ctx.pm, 'assign', 'web', n));
    assert.ok(
      sent.every((s) => /re-declaring n\d/.test(s)),
      sent.join('\n'),
    );
    // Returned once SQL committed, the broker down throughout.
    await until(
      'every row says why it is still owed',
      async () =>
        (
          await ctx.pm.store
            .admin`select count(*)::int as n from assignment.pending_delivery where attempts > 0 and last_error like 'the broker cannot be reached%'`
        )[0]!.n === NODES.length,
      30_000,
    );
    const owed = JSON.parse(await cli(ctx.pm, 'outbox', '--json')) as {
      node: string;
      attempts: number;
      last_error: string;
    }[];
    assert.equal(owed.map((o) => o.node).sort(), NODES);
    assert.ok(
      owed.every((o) => o.attempts > 0 && /broker cannot be reached/.test(o.last_error)),
      JSON.stringify(owed),
    );
    const list = JSON.parse(await cli(ctx.pm, 'node', 'list', '--json')) as {
      name: string;
      owed_serial: number | null;
    }[];
    const want = await newest(ctx);
    assert.equal(
      Object.fromEntries(list.map((l) => [l.name, l.owed_serial])),
      want,
      'node list shows the undelivered newest serial',
    );
    const planned = JSON.parse(await cli(ctx.pm, 'plan', '--json')) as { changed: string[]; owed: { node: string }[] };
    assert.equal(planned.changed, [], 'every change was declared by its command');
    assert.equal(planned.owed.map((o) => o.node).sort(), NODES, 'mesh plan shows what is owed');
    await ctx.serve.waitFor(/the outbox cannot reach the broker/, 20_000, smark);

    await ctx.pm.rabbit.resume();
    await until('everything owed delivered', async () => (await owedCount(ctx)) === 0, 60_000);
    await allAtNewest(ctx);
    const after = JSON.parse(await cli(ctx.pm, 'node', 'list', '--json')) as { owed_serial: number | null }[];
    assert.ok(after.every((l) => l.owed_serial === null));
  },
);

O('an enrolment whose re-declare fails is declared by serve once it can be, no command typed (W2)', async (ctx) => {
  const smark = ctx.serve.output().length;
  // A database fault of the assignment context only: the enrolment commits, declaring what it changed is refused.
  const fn = 'assignment.record_declarations(text[], bigint[], text[], text[], text)';
  await ctx.pm.store.admin.unsafe(`revoke execute on function ${fn} from public, mesh_assignment`);
  let n5: { host: Host; proc: Proc } | undefined;
  try {
    n5 = await ctx.pm.joined('n5', { MESH_HOST_ROOTS: ctx.root, MESH_HOST_RECONCILE_SECONDS: '3600' });
    await ctx.serve.waitFor(
      /serve: the nodes n5's enrolment changed were not declared again \(.*\); trying again in 1s/,
      30_000,
      smark,
    );
    const [none] = await ctx.pm.store.admin`select count(*)::int as n from assignment.declaration where node = 'n5'`;
    assert.is(none!.n, 0, 'nothing could be declared while the fault lasted');
  } finally {
    await ctx.pm.store.admin.unsafe(`grant execute on function ${fn} to public, mesh_assignment`);
  }
  // The retry, not a command: n5 gets its first declaration (its firewall, its peers) and applies it.
  await ctx.serve.waitFor(/serve: re-declaring .*n5 \d+.* \(n5's enrolment\)/, 60_000, smark);
  await until(
    'n5 reports its newest declaration',
    async () => {
      const [r] = await ctx.pm.store
        .admin`select (select serial::int from inventory.report where node = 'n5') as got, (select max(serial)::int from assignment.declaration where node = 'n5') as want`;
      return r!.want !== null && r!.got === r!.want;
    },
    60_000,
  );
  await n5!.proc.stop();
  await cli(ctx.pm, 'node', 'retire', 'n5');
});

O(
  'mesh plan with no node shows a change no declaration carries yet; declare --all --changed owes exactly it (W2)',
  async (ctx) => {
    assert.match(await cli(ctx.pm, 'plan'), /every node's composition is declared\nnothing owed/);
    // Behind the commands' back: a row written by hand owes nothing by itself.
    await ctx.pm.store.admin`insert into assignment.assignment (module, node) values ('idle', 'n3')`;
    const planned = JSON.parse(await cli(ctx.pm, 'plan', '--json')) as { changed: string[]; owed: unknown[] };
    assert.equal(planned.changed, ['n3']);
    assert.match(await cli(ctx.pm, 'plan'), /changed, not yet declared \(mesh declare --all --changed owes them\): n3/);
    const d = JSON.parse(await cli(ctx.pm, 'declare', '--all', '--changed', '--json')) as { node: string }[];
    assert.equal(
      d.map((x) => x.node),
      ['n3'],
    );
    assert.equal((JSON.parse(await cli(ctx.pm, 'plan', '--json')) as { changed: string[] }).changed, []);
    await allAtNewest(ctx);
  },
);

O(
  'a node away: its queue keeps only its newest few (the oldest dropped), and it applies its newest when it returns (W3)',
  async (ctx) => {
    const r = ctx.pm.rabbit;
    const api = adminApi(r);
    const queue = async () =>
      (await api.queue(VHOST, 'node.n4')) as unknown as {
        messages: number;
        effective_policy_definition: Record<string, unknown>;
      };
    // The management API shows a queue's policy once it has collected the queue's stats (later after a broker restart).
    const want = JSON.stringify({
      'max-length': NODE_QUEUE_KEEPS,
      'max-length-bytes': 16 << 20,
      overflow: 'drop-head',
    });
    await until(
      'the queue carries the node-queue policy',
      async () => {
        const d = (await queue()).effective_policy_definition;
        return d !== undefined && JSON.stringify(Object.fromEntries(Object.entries(d).sort())) === want;
      },
      30_000,
    );
    await ctx.hosts.n4!.proc.stop();
    Object.assign(process.env, ctx.pm.store.env);
    const signer = readSigner(ctx.pm.env);
    const made = [];
    for (let i = 0; i < NODE_QUEUE_KEEPS + 8; i++) made.push(...(await declare({ nodes: ['n4'], signer })));
    await until('every one delivered', async () => (await owedCount(ctx)) === 0, 60_000);
    await until('the broker counted them', async () => (await queue()).messages === NODE_QUEUE_KEEPS, 30_000);
    ctx.hosts.n4!.proc = ctx.hosts.n4!.host.run();
    await ctx.hosts.n4!.proc.waitFor(new RegExp(`applied declaration ${made.at(-1)!.serial}\\b`), 30_000);
    await allAtNewest(ctx);
  },
);

O(
  'a broker restart drops what a node away had on its queue (not persistent); the node returns to its newest anyway, asked from SQL on connect (W3)',
  async (ctx) => {
    const r = ctx.pm.rabbit;
    const api = adminApi(r);
    await ctx.hosts.n3!.proc.stop();
    Object.assign(process.env, ctx.pm.store.env);
    const [d] = await declare({ nodes: ['n3'], signer: readSigner(ctx.pm.env) });
    await until('delivered to the queue', async () => (await owedCount(ctx)) === 0, 60_000);
    const smark = ctx.serve.output().length;
    await r.halt();
    await r.resume();
    await ctx.serve.waitFor(/serve: consuming mesh\.control/, 60_000, smark);
    await until(
      'the queue came back empty',
      async () => Number((await api.queue(VHOST, 'node.n3'))?.messages ?? -1) === 0,
      30_000,
    );
    ctx.hosts.n3!.proc = ctx.hosts.n3!.host.run();
    await ctx.hosts.n3!.proc.waitFor(new RegExp(`applied declaration ${d!.serial}\\b`), 30_000);
    await allAtNewest(ctx);
  },
);

O(
  `serve killed with SIGKILL in the middle of draining ${OWED} owed declarations: the next serve delivers every one, none lost (W1, W3)`,
  async (ctx) => {
    await ctx.serve.stop();
    Object.assign(process.env, ctx.pm.store.env);
    const signer = readSigner(ctx.pm.env);
    for (let i = 0; i < OWED / NODES.length; i++) await declare({ nodes: NODES, signer });
    assert.is(await owedCount(ctx), OWED);

    // Hold the first batch between its confirms and its marking: serve publishes it, then waits on our lock.
    const admin = ctx.pm.store.admin;
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    const holding = admin.begin(async (tx) => {
      await tx`lock table assignment.outbox in share mode`;
      await released;
    });
    const first = await ctx.pm.serve();
    await until(
      'serve waits to mark a published batch',
      async () =>
        (await admin`select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%mark_delivered%'`)
          .length > 0,
      30_000,
    );
    await first.stop('SIGKILL');
    release();
    await holding;
    assert.is(await owedCount(ctx), OWED, 'nothing was marked delivered: the killed transaction rolled back');

    ctx.serve = await ctx.pm.serve();
    await until('every owed row delivered', async () => (await owedCount(ctx)) === 0, 60_000);
    // Every row, none lost: each declaration issued has its outbox row, delivered.
    const [c] = await admin`select count(*)::int as n from assignment.declaration d
                           where not exists (select 1 from assignment.outbox o where o.node = d.node and o.serial = d.serial and o.delivered_at is not null)`;
    assert.is(c!.n, 0);
    await allAtNewest(ctx);
    // Hosts dropped what was sent twice: no serial applied twice.
    for (const n of NODES) {
      const serials = [...ctx.hosts[n]!.proc.output().matchAll(/applied declaration (\d+)\b/g)].map((m) => m[1]);
      assert.is(new Set(serials).size, serials.length, `${n} applied a serial twice: ${serials.join(',')}`);
    }
  },
);

O.run();
