// W3 and D1/D2 across broker crashes, on a broker of this suite's own: three
// nodes, several declares, the broker SIGKILLed and started again three times
// while declarations and reports are in flight. Everything the control plane
// sends a node goes in the one delivery mode (src/broker/publish.ts, toNode), so
// a restart leaves no node queue holding an older declaration while the newer
// one is lost: afterwards no node reported `forged`, and every node is at its
// newest serial. One node is frozen (SIGSTOP) with serve's answer to its
// `recover` and a newer declaration delivered to it unacked, across a crash:
// its queue is empty when the broker is back, whatever was published before.
// A genuine older declaration put on a queue is reported `replayed`, and a
// forged one (lab/inject_forged.ts's forgery: another key) is still `forged`.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import amqp from 'amqplib';
import { privateFleet, stopFleet, type PrivateFleet } from '../link/private_mesh.js';
import { adminConnect } from '../harness/rabbitmq.js';
import { cli, until } from '../declare/helpers.js';
import { publish } from '../../src/broker/publish.js';
import { envelope } from '../../src/assignment/declare.js';
import { bodyText, fresh } from '../../src/wire/declaration.js';
import { signingPair, signingPublic } from '../../src/crypto/keys.js';
import { meshId, readSigner } from '../../src/home/home.js';
import { queueOf } from '../../src/wire/names.js';
import { VHOST } from '../../bundle/rabbitmq.js';

const NODES = ['r1', 'r2', 'r3'];
const FROZEN = 'r3';

type Ctx = PrivateFleet;
const R = suite<Ctx>('broker crashes under declarations and reports (W3, D1, D2)');

R.before(async (ctx) => {
  // Serve's idle sweep every second, so a returning broker is found within the test's patience.
  process.env.MESH_SERVE_SWEEP_SECONDS = '1';
  await privateFleet(ctx, NODES);
});

R.after((ctx) => stopFleet(ctx, ctx.hosts?.[FROZEN]?.proc));

/** Each node's newest serial in SQL, and the serial of its last report. */
async function serials(ctx: Ctx): Promise<Record<string, { newest: number; reported: number | null }>> {
  const rows = await ctx.pm.store.admin<{ node: string; newest: number; reported: number | null }[]>`
    select d.node, max(d.serial)::int as newest, (select r.serial::int from inventory.report r where r.node = d.node) as reported
      from assignment.declaration d group by d.node`;
  return Object.fromEntries(rows.map((r) => [r.node, { newest: r.newest, reported: r.reported }]));
}

const allAtNewest = (ctx: Ctx, what: string) =>
  until(
    `${what}: every node reports its newest serial`,
    async () => {
      const s = await serials(ctx);
      return NODES.every((n) => s[n] && s[n]!.reported === s[n]!.newest) && s;
    },
    90_000,
  );

const owed = async (ctx: Ctx) =>
  Number((await ctx.pm.store.admin`select count(*) from assignment.pending_delivery`)[0]!.count);

/** Every refusal the history holds, oldest first: its node and what the host said. */
const refusals = (ctx: Ctx) =>
  ctx.pm.store.admin<{ node: string; kind: string; fault: string; serial: number | null; reason: string }[]>`
    select node, kind, detail->>'fault' as fault, (detail->>'serial')::int as serial, detail->>'reason' as reason
      from audit.event where kind like 'refused%' order by seq`;

async function admin<T>(ctx: Ctx, f: (ch: amqp.ConfirmChannel) => Promise<T>): Promise<T> {
  const conn = await adminConnect(ctx.pm.rabbit, VHOST);
  try {
    return await f(await conn.createConfirmChannel());
  } finally {
    await conn.close();
  }
}

/** SIGKILL the broker and start it again; resolves once serve consumes again. */
async function crash(ctx: Ctx): Promise<void> {
  const smark = ctx.serve.output().length;
  await ctx.pm.rabbit.kill();
  await ctx.pm.rabbit.resume();
  await ctx.serve.waitFor(/serve: consuming mesh\.control/, 90_000, smark);
}

R('three SIGKILLs of the broker with reports in flight: nobody says forged, every node at its newest', async (ctx) => {
  await allAtNewest(ctx, 'joined');

  // Crash 1: a declare of every node, the broker killed the moment it is issued (declarations and reports in flight).
  await cli(ctx.pm, 'declare', ...NODES);
  await crash(ctx);
  await allAtNewest(ctx, 'after crash 1');
  await cli(ctx.pm, 'declare', ...NODES);
  await allAtNewest(ctx, 'declared after crash 1');

  // Crash 2, serve stopped: each host's `recover` waits in mesh.control for the next serve.
  await ctx.serve.stop();
  const frozen = ctx.hosts[FROZEN]!.proc;
  const fmark = frozen.output().length;
  await ctx.pm.rabbit.kill();
  await ctx.pm.rabbit.resume();
  await frozen.waitFor(/back in: connected to /, 60_000, fmark);
  // Frozen once connected (its `recover` is sent on connect): what serve sends it now is delivered and never acked.
  frozen.child.kill('SIGSTOP');
  ctx.serve = await ctx.pm.serve();
  // Its `recover` may come within the interval of the one it sent at crash 1: then it is answered at the interval's end.
  await ctx.serve.waitFor(
    new RegExp(`recover: (at the interval's end, )?handed ${FROZEN} its newest declaration`),
    45_000,
  );
  // A newer declaration for every node: the frozen one's is delivered unacked behind the answer to its recover.
  await cli(ctx.pm, 'declare', ...NODES);
  await until('every declaration confirmed by the broker', async () => (await owed(ctx)) === 0, 30_000);
  const before = await serials(ctx);

  // Crash 3, while the others report it and the frozen host holds it unacked.
  await crash(ctx);
  const left = await admin(ctx, async (ch) => (await ch.checkQueue(queueOf(FROZEN))).messageCount);
  assert.is(
    left,
    0,
    `${FROZEN}'s queue after the crash holds nothing from before it (W3: one delivery mode, not persistent)`,
  );
  frozen.child.kill('SIGCONT');
  const after = await allAtNewest(ctx, 'after crash 3');
  for (const n of NODES) assert.is(after[n]!.newest, before[n]!.newest, `${n}: nothing newer was declared meanwhile`);
  await cli(ctx.pm, 'declare', ...NODES);
  const last = await allAtNewest(ctx, 'declared after crash 3');

  const said = await refusals(ctx);
  assert.equal(
    said.filter((r) => r.fault === 'forged'),
    [],
    'no node reported forged: a restart replays nothing from another key',
  );
  for (const n of NODES) assert.not.match(ctx.hosts[n]!.proc.output(), /: forged:/, `${n} refused nothing as forged`);

  // A genuine older declaration put back on a queue: replayed, never forged.
  const [old] = await ctx.pm.store.admin`select envelope from assignment.declaration where node = 'r1' and serial = 1`;
  const forger = signingPair().secret;
  const signer = readSigner(ctx.pm.env);
  const forged = envelope(bodyText(signer.mesh, 'r2', 1_000_000, '[]', fresh()), {
    secret: forger,
    public: signingPublic(forger),
    mesh: meshId(signingPublic(forger)),
  });
  const seen = said.length;
  await admin(ctx, async (ch) => {
    await publish(ch, '', queueOf('r1'), old!.envelope as Buffer, { type: 'declaration', mandatory: true });
    await publish(ch, '', queueOf('r2'), forged, { type: 'declaration', mandatory: true });
  });
  const injected = await until(
    'both refusals in the history',
    async () => {
      const r = (await refusals(ctx)).slice(seen).sort((a, b) => a.node.localeCompare(b.node));
      return r.length >= 2 && r;
    },
    30_000,
  );
  assert.equal(
    injected.map((r) => [r.node, r.fault, r.serial]),
    [
      ['r1', 'replayed', 1],
      ['r2', 'forged', null], // not read: the signature is judged before a byte of the body
    ],
    'the replay said as replayed, the forgery as forged',
  );
  const now = await serials(ctx);
  for (const n of NODES) assert.is(now[n]!.reported, last[n]!.newest, `${n} still at its newest`);
});

R.run();
